import type { Db } from '@pm/shared/db';

/** A transaction handle (what `db.tx` passes its callback). */
export type Tx = Parameters<Parameters<Db['tx']>[0]>[0];

/**
 * What a projection recomputes: everything (a rebuild), or the rows of some users and markets.
 * `now` is the clock every time-dependent figure (profit_7d, the week board) is computed against.
 */
export type ProjectionScope = { now: Date } & ({ all: true } | { all: false; userIds: number[]; marketIds: string[] });

/**
 * A projection (docs/conventions.md): a name, a version (bump it when its rows' meaning changes), the
 * events it reacts to, and `apply`, which recomputes its rows for a scope from the source tables,
 * set-based. Where it runs (a job, a rebuild) is decided by the caller, not in here. `apply` over
 * `{all: true}` after `truncate` is the rebuild, and must give the rows the incremental path gives.
 */
export interface Projection {
  name: string;
  version: number;
  handles: readonly ProjectedEvent[];
  /** The tables it owns, emptied by a rebuild. */
  tables: readonly string[];
  apply(tx: Tx, scope: ProjectionScope): Promise<void>;
}

/** The facts projections react to (past tense). */
export type ProjectedEvent = 'UserCreated' | 'UserFollowed' | 'UserUnfollowed' | 'CallRecorded' | 'CallCopied' | 'CallSettled' | 'ComboSettled' | 'UserRecordChanged';
