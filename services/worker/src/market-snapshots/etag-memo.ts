import { snapshotEtag, type SnapshotName } from '@pm/shared/redis';

/**
 * The ETag of the body last seen under each name, so a body handed over again unchanged is not
 * hashed again: the list bodies come every build, most of them unchanged, and the search body is
 * ~5 MB at 5,000 open events. The list assembler (list-bodies.ts) hands back the very same string
 * for an unchanged list, so the comparison is a pointer check.
 *
 * Safe whatever Redis holds: an ETag depends on the body alone. Whether to write is still decided by
 * the writer, against the ETags it knows Redis has (and after `forget`, against Redis itself).
 * Holds one body per name: the list names, a few dozen.
 */
export interface EtagMemo {
  /** snapshotEtag(body), without hashing when `body` is the one last seen under `name`. */
  etagOf(name: SnapshotName, body: string): string;
}

export function createEtagMemo(): EtagMemo {
  const last = new Map<SnapshotName, { body: string; etag: string }>();
  return {
    etagOf(name, body) {
      const prev = last.get(name);
      if (prev !== undefined && prev.body === body) return prev.etag;
      const etag = snapshotEtag(body);
      last.set(name, { body, etag });
      return etag;
    },
  };
}
