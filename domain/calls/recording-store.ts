import { Schema, model } from 'mongoose';
import { S3Bucket, type S3BucketConfig } from '../../providers/object-storage/s3';

/**
 * Where calls' recordings (WAV files) are kept: the `call_recordings` collection, one header
 * document `_id: <call_id>` and the file's bytes in chunk documents `_id: <call_id>:<n>`
 * (n from 0). A document must stay under MongoDB's 16 MB, and an hour of stereo 8 kHz is
 * 115 MB, so the bytes are split; every read and write is by `_id` alone, the one filter
 * FerretDB answers from its primary key.
 *
 * The header is written last and read first: a recording whose write stopped half-way has
 * no header and is never served. Writing again (a retried save) replaces the same documents.
 *
 * With an object store configured (RECORDINGS_S3_*, docs/decisions/0214), the bytes go to the
 * bucket instead, one object `recordings/<workspace_id>/<call_id>.wav` put with server-side
 * encryption, and the header says `store: 's3'` and the key. Headers without `store` are the
 * database's: recordings made before the store was configured stay readable.
 */

/** Bytes a chunk document holds at most. */
export const RECORDING_CHUNK_BYTES = 1_000_000;
export const RECORDING_CONTENT_TYPE = 'audio/wav';

const COLLECTION = 'call_recordings';

const headerSchema = new Schema(
  {
    _id: { type: String, required: true },
    workspace_id: { type: String, required: true },
    content_type: { type: String, required: true },
    chunks: { type: Number, required: true },
    bytes: { type: Number, required: true },
    duration_ms: { type: Number, required: true },
    created_at: { type: Date, required: true },
    /** Where the bytes are: absent or `db` (chunk documents), or `s3` (the object `object_key`). */
    store: { type: String, default: 'db' },
    object_key: { type: String, default: null },
  },
  { collection: COLLECTION, versionKey: false },
);
const chunkSchema = new Schema(
  {
    _id: { type: String, required: true },
    data: { type: Buffer, required: true },
  },
  { collection: COLLECTION, versionKey: false },
);

// Two shapes in one collection: each model reads only its own documents (by their `_id`s).
const RecordingHeader = model('CallRecordingHeader', headerSchema);
const RecordingChunk = model('CallRecordingChunk', chunkSchema);

export interface StoredRecording {
  callId: string;
  contentType: string;
  bytes: number;
  durationMs: number;
  chunks: number;
  /** The bucket's object holding the bytes; null: chunk documents in the database. */
  objectKey: string | null;
}

let bucket: S3Bucket | null | undefined;

/** Where new recordings go from now on: an S3-compatible bucket, or (null) the database. Each process sets it at start. */
export function useRecordingStorage(config: S3BucketConfig | null): void {
  bucket?.close();
  bucket = config ? new S3Bucket(config) : null;
}

function bucketOrFail(): S3Bucket {
  if (!bucket) throw new Error('this recording is in object storage, and RECORDINGS_S3_* is not configured in this process');
  return bucket;
}

const objectKeyOf = (workspaceId: string, callId: string) => `recordings/${workspaceId}/${callId}.wav`;

const chunkId = (callId: string, n: number) => `${callId}:${n}`;

/** Stores a call's recording: the chunks one after the other (a few MB at a time at most in flight), then the header. */
export async function saveRecording(recording: { callId: string; workspaceId: string; wav: Buffer; durationMs: number }): Promise<StoredRecording> {
  const { callId, workspaceId, wav } = recording;
  if (bucket) {
    const objectKey = objectKeyOf(workspaceId, callId);
    await bucket.put(objectKey, wav, RECORDING_CONTENT_TYPE);
    const header = { ...headerOf(recording, 0), store: 's3', object_key: objectKey };
    await RecordingHeader.replaceOne({ _id: callId }, header, { upsert: true });
    return { callId, contentType: header.content_type, bytes: header.bytes, durationMs: header.duration_ms, chunks: 0, objectKey };
  }
  const chunks = Math.ceil(wav.length / RECORDING_CHUNK_BYTES);
  for (let n = 0; n < chunks; n++) {
    const data = wav.subarray(n * RECORDING_CHUNK_BYTES, (n + 1) * RECORDING_CHUNK_BYTES);
    // Through the driver: mongoose's casting copies the bytes (more than once), and a media
    // node ending many calls at once paid for those copies in garbage-collection pauses that
    // held up the live calls' audio. The driver stores a Buffer as BSON binary data as is.
    await RecordingChunk.db.collection<{ _id: string; data: Buffer }>(COLLECTION).replaceOne({ _id: chunkId(callId, n) }, { data }, { upsert: true });
  }
  const header = headerOf(recording, chunks);
  await RecordingHeader.replaceOne({ _id: callId }, header, { upsert: true });
  return { callId, contentType: header.content_type, bytes: header.bytes, durationMs: header.duration_ms, chunks, objectKey: null };
}

function headerOf(recording: { callId: string; workspaceId: string; wav: Buffer; durationMs: number }, chunks: number) {
  return {
    _id: recording.callId,
    workspace_id: recording.workspaceId,
    content_type: RECORDING_CONTENT_TYPE,
    chunks,
    bytes: recording.wav.length,
    duration_ms: Math.round(recording.durationMs),
    created_at: new Date(),
  };
}

/** The recording of a call of this workspace, or null (none, or another workspace's). */
export async function findRecording(callId: string, workspaceId: string): Promise<StoredRecording | null> {
  const header = await RecordingHeader.findById(callId).lean();
  if (!header || header.workspace_id !== workspaceId) return null;
  return {
    callId,
    contentType: header.content_type,
    bytes: header.bytes,
    durationMs: header.duration_ms,
    chunks: header.chunks,
    objectKey: header.store === 's3' ? header.object_key! : null,
  };
}

/** The recording's bytes, one chunk at a time (a chunk that is missing is an error: the file would be cut). */
export async function* recordingChunks(recording: StoredRecording): AsyncGenerator<Buffer> {
  if (recording.objectKey) {
    yield* bucketOrFail().get(recording.objectKey);
    return;
  }
  for (let n = 0; n < recording.chunks; n++) {
    const chunk = await RecordingChunk.findById(chunkId(recording.callId, n)).lean();
    if (!chunk) throw new Error(`chunk ${n} of the recording of call ${recording.callId} is missing`);
    // A lean read answers the bytes as a BSON Binary.
    const data = chunk.data as unknown as Buffer | { buffer: Uint8Array };
    const bytes = Buffer.isBuffer(data) ? data : data.buffer;
    yield Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
}

/**
 * Erases a call's recording (docs/decisions/0208, 0214, 0215), wherever it is. The object in
 * the bucket goes first, so that a deletion stopped half-way leaves its header, which a retry
 * finds again (the header is the only record of the object's key); then the header, so that a
 * half-erased file is never served; then every chunk by its id range (also chunks a stopped
 * write left without a header). True when there was a header. Safe to run again.
 */
export async function deleteRecording(callId: string): Promise<boolean> {
  const header = await RecordingHeader.findById(callId, { store: 1, object_key: 1 }).lean();
  if (header?.store === 's3' && header.object_key) await bucketOrFail().delete(header.object_key);
  const { deletedCount } = await RecordingHeader.deleteOne({ _id: callId });
  await RecordingChunk.deleteMany({ _id: { $gte: `${callId}:`, $lt: `${callId};` } });
  return deletedCount > 0;
}

/** Calls of the workspace whose recording was made before `before`, at most `limit` (the retention sweep). */
export async function recordingsCreatedBefore(workspaceId: string, before: Date, limit: number): Promise<string[]> {
  const headers = await RecordingHeader.find({ workspace_id: workspaceId, created_at: { $lt: before } }, { _id: 1 })
    .limit(limit)
    .lean();
  return headers.map((h) => h._id);
}
