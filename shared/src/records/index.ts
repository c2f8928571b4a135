/**
 * The service's own write path (`@pm/shared/records`): people, follows, calls, thesis updates and
 * combos at the live chance, and the trigger that requests projection and snapshot work after a write.
 */
export { createRecords, MIN_COMBO_LEGS, MAX_COMBO_LEGS, type Records, type RecordsDeps, type CreateUserInput, type RecordCallInput, type RecordComboInput } from './records.js';
export { RecordRefused, RecordsUnavailable, isConnectionLoss, isLockConflict, type RecordRefusedCode } from './errors.js';
export {
  createRecordsTrigger,
  recordsDirtyKey,
  projectionUsersDirtyKey,
  projectionMarketsDirtyKey,
  PROJECT_USERS_DEDUP_ID,
  RECORD_SNAPSHOTS_DEDUP_ID,
  type RecordsTrigger,
  type RecordsTriggerOptions,
  type RecordsDirtyMember,
} from './trigger.js';
export { readLiveChance, MAX_PRICE_AGE_MS } from './live-chance.js';
export { newPublicId } from './ids.js';
export { retryInDoubt, newWriteKey } from './retry.js';
export { WRITE_KEYS_KEEP } from './write-keys.js';
export { HANDLE_PATTERN, MAX_THESIS_LENGTH, parseHandle, parseInterest } from './validate.js';
