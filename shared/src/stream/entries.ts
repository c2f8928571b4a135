/**
 * Reading the stream's entries (writer.ts writes them): fields `t`, `e`, `m`, `d` of one Redis Stream
 * entry, and the order of entry ids.
 */

export interface StreamEntry {
  /** The Redis Stream id, `<ms>-<seq>`. */
  id: string;
  topic: string;
  /** Event slug; '' when the message concerns no known event. */
  event: string;
  /** Market id; '' when the message concerns no one market (score). */
  market: string;
  /** The message's JSON, as written. */
  data: string;
}

/** One entry as XRANGE / XREAD return it: `[id, [field, value, …]]`. */
export function toStreamEntry(id: string, fields: readonly string[]): StreamEntry {
  let topic = '';
  let event = '';
  let market = '';
  let data = '';
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const value = fields[i + 1] as string;
    switch (fields[i]) {
      case 't':
        topic = value;
        break;
      case 'e':
        event = value;
        break;
      case 'm':
        market = value;
        break;
      case 'd':
        data = value;
        break;
    }
  }
  return { id, topic, event, market, data };
}

/** Compares two stream ids (`<ms>-<seq>`, each part up to 20 digits) numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  return compareDigits(am, bm) || compareDigits(as, bs);
}

function compareDigits(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (x.length !== y.length) return x.length < y.length ? -1 : 1;
  return x < y ? -1 : x > y ? 1 : 0;
}
