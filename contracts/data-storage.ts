/**
 * What the service keeps of a call (an agent's `call.data_storage`, docs/decisions/0213):
 * everything; everything with personal identifiers masked and no recording; or only the basic
 * attributes (ids, times, numbers, duration, cost, status) once `call.completed` is sent.
 */
export const DATA_STORAGE_MODES = ['everything', 'everything_except_pii', 'basic_attributes_only'] as const;
export type DataStorage = (typeof DATA_STORAGE_MODES)[number];

/** The mode of a stored value; anything unknown (older records) keeps everything, as before. */
export function dataStorageOf(value: unknown): DataStorage {
  return (DATA_STORAGE_MODES as readonly unknown[]).includes(value) ? (value as DataStorage) : 'everything';
}

/** Whether a call of this mode may keep a recording at all. */
export const keepsRecording = (mode: DataStorage): boolean => mode === 'everything';
