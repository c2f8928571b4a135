/**
 * V8 options of the API processes, on node's command line (a node:cluster worker inherits them; every
 * service's are in node-args.ts, which the Dockerfile, docker-compose.yml and the run line share):
 * - the young generation capped at 4 MB a semi-space: Node 24's V8 default let it grow to 64 MB a
 *   semi-space under load, 128 MB of new space per process, the largest part of the API's 340 MB
 *   peak RSS in bench:api. A request's garbage dies within its round trip, so a small space promotes
 *   little, but the smaller it is the more often it is collected: under wrk with the feed live
 *   (`--trace-gc`, 15-s windows) 2 MB meant 769–1,067 scavenges and 920–1,020 ms of pauses, 4 MB
 *   539–652 and 660–700 ms, 8 MB 256–356 and 520–560 ms; bench:api's peak RSS was 117–121 MB at
 *   2 MB, 124.5 at 4 MB and 143.5 at 8 MB;
 * - the first old-generation limit at 32 MB (V8's own is sized from the machine's memory and
 *   survival rates): under the first load on a stack that is still building 5,000 event pages, what
 *   the small young generation does promote (announcements, price batches and snapshot versions
 *   queued behind requests) filled old space to 73 MB before the first full collection, and the RSS
 *   that made (153–158 MB) stayed. The live heap is 20–30 MB; the limit is soft, later ones V8 sets;
 * - each later old-generation limit 1.5 times what the last full collection kept: V8's own factor
 *   (up to 4 for a small heap that it sees collected fast) set the limit after the start's first
 *   collection (21 MB kept) near 84 MB, old space filled to 86 MB under the first load (`--trace-gc`),
 *   and the freed pages stayed in V8's page pool (48 MB "pooled") and in the RSS: a fresh stack loaded
 *   at once peaked at 168–171 MB (bench:api 146.6 and 170.7); with 1.5, 132–141 MB (bench:api
 *   133–143), the heap between 37 and 58 MB, a full collection every 3–7 s (2–15 ms, mostly
 *   concurrent), requests/s unchanged.
 */
export const API_NODE_ARGS: readonly string[] = ['--max-semi-space-size=4', '--initial-old-space-size=32', '--heap-growing-percent=50'];
