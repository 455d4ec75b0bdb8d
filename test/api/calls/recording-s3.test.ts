import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import mongoose from 'mongoose';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { newId } from '../../../db/ids';
import { Call } from '../../../db/models/call';
import { CallRecording } from '../../../media/audio/recording';
import { deleteRecording, saveRecording, useRecordingStorage } from '../../../domain/calls/recording-store';
import { encodeMulaw } from '../../../providers/audio/mulaw';
import { S3Bucket } from '../../../providers/object-storage/s3';
import { speakText } from '../../../simulators/simulated-speech';
import { activeOwner, type SignedUp } from '../../support/accounts';
import { startApi, type RunningApi } from '../../support/api';
import { startS3Server, type S3Server } from '../../support/seaweedfs';

const BUCKET = 'call-recordings';

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(file) : [file];
  });
}

/**
 * Recordings in S3-compatible object storage (RECORDINGS_S3_*, docs/decisions/0214), against
 * a real S3 server (SeaweedFS, built by `install-tools.sh s3`): the bytes go to the bucket with
 * server-side encryption, `GET /calls/{id}/recording` serves them as before, recordings already
 * in the database stay readable, and a deletion removes the object.
 */
describe('Call recordings in S3-compatible object storage', function () {
  this.timeout(180_000);
  let s3: S3Server;
  let client: S3Client;
  let api: RunningApi;
  let owner: SignedUp;

  const storage = () => ({
    endpoint: s3.endpoint,
    bucket: BUCKET,
    region: 'us-east-1',
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    kmsKeyId: null,
  });
  const newCall = async () => {
    const callId = newId();
    const at = new Date();
    await Call.create({
      _id: callId,
      workspace_id: owner.workspaceId,
      agent_id: newId(),
      agent_name: 'Asha',
      direction: 'outbound',
      to_number: '+919800000001',
      from_number: '+918000000001',
      status: 'completed',
      created_at: at,
      updated_at: at,
    });
    return callId;
  };
  const wavSaying = (words: string) => {
    const recording = new CallRecording();
    recording.addCaller(encodeMulaw(speakText(words, { sampleRate: 8000 })), 0);
    return { wav: recording.toWav(), durationMs: recording.durationMs };
  };
  const recordingOf = (callId: string) => api.request(`/api/v1/calls/${callId}/recording`, { headers: owner.auth });
  const chunkDocuments = (callId: string) => mongoose.connection.collection<{ _id: string }>('call_recordings').countDocuments({ _id: `${callId}:0` });

  before(async () => {
    s3 = await startS3Server();
    client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
    api = await startApi({});
    owner = await activeOwner(api, { name: 'Asha Rao' });
  });
  after(async () => {
    useRecordingStorage(null);
    client?.destroy();
    await api?.close();
    await s3?.stop();
  });

  it('puts the file in the bucket encrypted at rest (SSE-S3), serves it byte for byte, and deletes it', async () => {
    const before = await newCall();
    const { wav: oldWav, durationMs: oldMs } = wavSaying('kept in the database');
    await saveRecording({ callId: before, workspaceId: owner.workspaceId, wav: oldWav, durationMs: oldMs });

    useRecordingStorage(storage());
    const callId = await newCall();
    const { wav, durationMs } = wavSaying('a recording in the bucket');
    const stored = await saveRecording({ callId, workspaceId: owner.workspaceId, wav, durationMs });
    const key = `recordings/${owner.workspaceId}/${callId}.wav`;
    expect(stored).to.include({ objectKey: key, bytes: wav.length });

    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head).to.include({ ServerSideEncryption: 'AES256', ContentLength: wav.length, ContentType: 'audio/wav' });
    expect(await chunkDocuments(callId)).to.equal(0);
    // Encrypted on the server's disk: no file there holds the recording's bytes.
    const sample = wav.subarray(2_000, 2_064);
    expect(filesUnder(s3.dataDir).filter((file) => fs.readFileSync(file).includes(sample))).to.deep.equal([]);

    const res = await recordingOf(callId);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('audio/wav');
    expect(Buffer.from(await res.arrayBuffer()).equals(wav)).to.equal(true);
    // Made before the bucket was configured: still served from the database.
    expect(Buffer.from(await (await recordingOf(before)).arrayBuffer()).equals(oldWav)).to.equal(true);

    expect(await deleteRecording(callId)).to.equal(true);
    expect((await recordingOf(callId)).status).to.equal(404);
    const gone = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key })).then(
      () => 'found',
      (error: Error) => error.name,
    );
    expect(gone).to.equal('NoSuchKey');
  });

  it('asks for SSE-KMS when a key id is configured, and refuses to keep a recording it cannot put', async () => {
    expect(new S3Bucket({ ...storage(), kmsKeyId: 'recordings-key' }).encryption()).to.deep.equal({
      ServerSideEncryption: 'aws:kms',
      SSEKMSKeyId: 'recordings-key',
    });

    useRecordingStorage({ ...storage(), secretAccessKey: 'wrong-secret' });
    const callId = await newCall();
    const { wav, durationMs } = wavSaying('never stored');
    const refused = await saveRecording({ callId, workspaceId: owner.workspaceId, wav, durationMs }).then(
      () => null,
      (error: Error) => error.name,
    );
    expect(refused).to.equal('SignatureDoesNotMatch');
    expect((await recordingOf(callId)).status).to.equal(404);
  });
});
