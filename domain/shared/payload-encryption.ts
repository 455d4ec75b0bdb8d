import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { ClientPlugin, ConnectionPlugin } from '@temporalio/client';
import type { NativeConnectionPlugin, WorkerPlugin } from '@temporalio/worker';
import type { PayloadKeysConfig } from '../../config/env';

/**
 * Callers' data in Temporal (docs/decisions/0200): every payload the service writes (workflow
 * inputs and results, activity arguments, signals, updates, queries, user metadata, failures'
 * details and messages) is encrypted with AES-256-GCM before it leaves the process, so Temporal's
 * database and anyone reading its frontend or UI see ciphertext.
 *
 * An encrypted payload: metadata `encoding: binary/encrypted` and `encryption-key-id: <id>`;
 * data the 12-byte nonce, the ciphertext of the original Payload (protobuf, metadata included)
 * and the 16-byte tag, the layout WebCrypto's AES-GCM and Temporal's encryption samples use.
 */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const utf8 = new TextEncoder();
const ENCRYPTED_ENCODING_BYTES = utf8.encode(ENCRYPTED_ENCODING);
const PayloadMessage = temporal.api.common.v1.Payload;

/** A payload this codec wrote (its encoding says so); anything else is plaintext. */
export function isEncryptedPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  if (!encoding || encoding.length !== ENCRYPTED_ENCODING_BYTES.length) return false;
  return encoding.every((byte, i) => byte === ENCRYPTED_ENCODING_BYTES[i]);
}

/**
 * The codec. Keys are raw 32-byte keys imported once (no key derivation per payload: the codec
 * runs on every payload of every task). `decode` leaves plaintext payloads as they are: the
 * histories written before encryption, and by a client without the codec, stay readable.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys = new Map<string, KeyObject>();
  private readonly currentKeyId: string;
  private readonly currentKeyIdBytes: Uint8Array;

  constructor(config: PayloadKeysConfig) {
    for (const { id, key } of config.keys) this.keys.set(id, createSecretKey(key));
    if (!this.keys.has(config.currentKeyId)) throw new Error(`the current payload key "${config.currentKeyId}" is not among the keys`);
    this.currentKeyId = config.currentKeyId;
    this.currentKeyIdBytes = utf8.encode(config.currentKeyId);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decrypt(payload));
  }

  /** Idempotent: a payload already encrypted (e.g. sent back through the codec server) is kept. */
  encrypt(payload: Payload): Payload {
    if (isEncryptedPayload(payload)) return payload;
    const plaintext = PayloadMessage.encode(payload).finish();
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.currentKeyId)!, nonce);
    const data = Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return { metadata: { encoding: ENCRYPTED_ENCODING_BYTES, [KEY_ID_METADATA]: this.currentKeyIdBytes }, data };
  }

  decrypt(payload: Payload): Payload {
    if (!isEncryptedPayload(payload)) return payload;
    const keyId = payload.metadata?.[KEY_ID_METADATA] ? Buffer.from(payload.metadata[KEY_ID_METADATA]).toString('utf8') : '';
    const key = this.keys.get(keyId);
    if (!key) throw new PayloadDecryptionError(`a payload is encrypted with key "${keyId}", which TEMPORAL_PAYLOAD_KEYS does not hold`);
    const data = payload.data ?? new Uint8Array();
    if (data.length < NONCE_BYTES + TAG_BYTES)
      throw new PayloadDecryptionError(`a payload encrypted with key "${keyId}" is too short to hold a nonce and a tag`);
    const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new PayloadDecryptionError(`a payload encrypted with key "${keyId}" does not decrypt with it (another key of the same id, or altered data)`);
    }
    const decoded = PayloadMessage.decode(plaintext);
    return { metadata: decoded.metadata ?? {}, data: decoded.data ?? new Uint8Array() };
  }
}

export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

/** The failure converter module (temporal-failure-converter.ts), by path: workers bundle it into the workflow sandbox. */
export const FAILURE_CONVERTER_PATH = require.resolve('./temporal-failure-converter');

/**
 * The encryption of one process, installed on its Temporal connections: the plugin puts the
 * codec and the failure converter into every Client and Worker (replay workers included) made
 * on a connection that carries it, so no client or worker of the process can be created without
 * them.
 */
export interface PayloadEncryption {
  codec: EncryptionCodec;
  /** For a Client, Worker or replay that has no connection carrying the plugin. */
  dataConverter: DataConverter;
  plugin: ClientPlugin & WorkerPlugin & ConnectionPlugin & NativeConnectionPlugin;
}

export function payloadEncryption(keys: PayloadKeysConfig): PayloadEncryption {
  const codec = new EncryptionCodec(keys);
  const dataConverter: DataConverter = { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH };
  const install = <T extends { dataConverter?: DataConverter }>(options: T): T => {
    const given = options.dataConverter;
    if (given?.payloadCodecs?.includes(codec)) return options;
    return {
      ...options,
      dataConverter: {
        ...given,
        payloadCodecs: [...(given?.payloadCodecs ?? []), codec],
        failureConverterPath: given?.failureConverterPath ?? FAILURE_CONVERTER_PATH,
      },
    };
  };
  return {
    codec,
    dataConverter,
    plugin: { name: 'voice-agents.payload-encryption', configureClient: install, configureWorker: install, configureReplayWorker: install },
  };
}

/**
 * A process's encryption from its configuration. Every process that talks to Temporal needs it:
 * without keys it refuses to start rather than write callers' data in plaintext.
 */
export function requirePayloadEncryption(keys: PayloadKeysConfig | null): PayloadEncryption {
  if (!keys)
    throw new Error(
      'TEMPORAL_PAYLOAD_KEYS is not set: Temporal payloads are encrypted (docs/operations.md, "Callers\' data in Temporal"). `npm start` makes a local key in .data/; elsewhere set TEMPORAL_PAYLOAD_KEYS=<id>:<base64 of 32 random bytes>',
    );
  return payloadEncryption(keys);
}
