import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';

/**
 * An S3-compatible bucket (AWS S3, or any server speaking its API: SeaweedFS, Ceph, R2, ...)
 * as the recordings' object store (RECORDINGS_S3_*, docs/decisions/0214). Every put asks for
 * server-side encryption: SSE-KMS under `kmsKeyId` when one is given, else SSE-S3 (AES256).
 */
export interface S3BucketConfig {
  /** `https://s3.ap-south-1.amazonaws.com`, or an S3-compatible server's URL; null: AWS's own endpoint for the region. */
  endpoint: string | null;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** SSE-KMS under this key; null: SSE-S3 (AES256). */
  kmsKeyId: string | null;
}

export class S3Bucket {
  private readonly client: S3Client;

  constructor(readonly config: S3BucketConfig) {
    this.client = new S3Client({
      region: config.region,
      credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
      ...(config.endpoint ? { endpoint: config.endpoint, forcePathStyle: true } : {}),
    });
  }

  /** The encryption each put asks for. */
  encryption(): Pick<PutObjectCommandInput, 'ServerSideEncryption' | 'SSEKMSKeyId'> {
    return this.config.kmsKeyId ? { ServerSideEncryption: 'aws:kms', SSEKMSKeyId: this.config.kmsKeyId } : { ServerSideEncryption: 'AES256' };
  }

  async put(key: string, body: Buffer, contentType: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.config.bucket, Key: key, Body: body, ContentType: contentType, ...this.encryption() }));
  }

  /** The object's bytes as they arrive. */
  async *get(key: string): AsyncGenerator<Buffer> {
    const answer = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
    if (!answer.Body) throw new Error(`the object ${key} has no body`);
    for await (const chunk of answer.Body as Readable) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
  }

  /** Deletes the object (deleting one that is not there succeeds, as S3 answers). */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: key }));
  }

  close(): void {
    this.client.destroy();
  }
}
