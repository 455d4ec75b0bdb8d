import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import { loadConfig, payloadKeysConfig, payloadKeysEnv } from '../../config/env';
import { ENCRYPTED_ENCODING, EncryptionCodec, KEY_ID_METADATA, PayloadDecryptionError, requirePayloadEncryption } from '../../domain/shared/payload-encryption';
import { failureConverter } from '../../domain/shared/temporal-failure-converter';
import { ensureLocalPayloadKey, LOCAL_PAYLOAD_KEY_FILE, readLocalPayloadKey } from '../../scripts/infra/local-payload-key';

const key = () => crypto.randomBytes(32).toString('base64');
const text = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const PHONE = '+919812345678';

/**
 * The payload codec (docs/decisions/0200): AES-256-GCM of the whole payload, the key id in its
 * metadata, several keys for reading and one for writing, plaintext payloads passed through.
 */
describe('Temporal payload encryption', () => {
  const [k1, k2] = [key(), key()];
  const keys = (current: string) => payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `old:${k1},new:${k2}`, TEMPORAL_PAYLOAD_KEY_CURRENT: current }, false)!;

  it('encrypts a payload whole, naming the key, and decrypts it back to the same payload', async () => {
    const codec = new EncryptionCodec(keys('new'));
    const plain = defaultPayloadConverter.toPayload({ to: PHONE, name: 'Asha Rao' });
    const [encrypted] = await codec.encode([plain]);
    expect(text(encrypted!.metadata!.encoding)).to.equal(ENCRYPTED_ENCODING);
    expect(text(encrypted!.metadata![KEY_ID_METADATA])).to.equal('new');
    expect(Object.keys(encrypted!.metadata!)).to.deep.equal(['encoding', KEY_ID_METADATA]);
    // Neither the value nor its original encoding shows.
    const raw = Buffer.from(encrypted!.data!).toString('latin1');
    for (const secret of [PHONE, 'Asha', 'json/plain']) expect(raw).not.to.contain(secret);
    const [decrypted] = await codec.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(decrypted!)).to.deep.equal({ to: PHONE, name: 'Asha Rao' });
    expect(text(decrypted!.metadata!.encoding)).to.equal('json/plain');
  });

  it('uses a fresh nonce each time: the same value encrypts differently', async () => {
    const codec = new EncryptionCodec(keys('new'));
    const plain = defaultPayloadConverter.toPayload(PHONE);
    const [a, b] = await codec.encode([plain, plain]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).to.equal(false);
  });

  it('rotates: payloads of the old key still decrypt after the current key changes; a removed key is named in the error', async () => {
    const [before] = await new EncryptionCodec(keys('old')).encode([defaultPayloadConverter.toPayload(PHONE)]);
    const rotated = new EncryptionCodec(keys('new'));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([before!]))[0]!)).to.equal(PHONE);
    expect(text((await rotated.encode([defaultPayloadConverter.toPayload(PHONE)]))[0]!.metadata![KEY_ID_METADATA])).to.equal('new');
    const withoutOld = new EncryptionCodec(payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `new:${k2}` }, false)!);
    const error = await withoutOld.decode([before!]).catch((err: Error) => err);
    expect(error).to.be.instanceOf(PayloadDecryptionError).and.have.property('message').that.contains('key "old"');
  });

  it('passes plaintext payloads through (histories from before encryption) and never encrypts twice', async () => {
    const codec = new EncryptionCodec(keys('new'));
    const plain: Payload = defaultPayloadConverter.toPayload({ note: 'recorded' });
    expect((await codec.decode([plain]))[0]).to.equal(plain);
    const [once] = await codec.encode([plain]);
    expect((await codec.encode([once!]))[0]).to.equal(once);
  });

  it('refuses altered ciphertext and a key of the same id with other bytes', async () => {
    const [encrypted] = await new EncryptionCodec(keys('new')).encode([defaultPayloadConverter.toPayload(PHONE)]);
    const altered = Buffer.from(encrypted!.data!);
    altered[20] = altered[20]! ^ 1;
    const codec = new EncryptionCodec(keys('new'));
    expect(await codec.decode([{ ...encrypted!, data: altered }]).catch((err: Error) => err.message)).to.contain('does not decrypt');
    const impostor = new EncryptionCodec(payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `new:${key()}` }, false)!);
    expect(await impostor.decode([encrypted!]).catch((err: Error) => err.message)).to.contain('does not decrypt');
  });

  it('puts failure messages and stack traces into the encoded attributes, which decode back', () => {
    const failure = failureConverter.errorToFailure(
      ApplicationFailure.create({ message: `could not dial ${PHONE}`, type: 'DialFailed' }),
      defaultPayloadConverter,
    );
    expect(failure.message).to.equal('Encoded failure');
    expect(failure.stackTrace).to.equal('');
    expect(defaultPayloadConverter.fromPayload(failure.encodedAttributes!)).to.have.property('message', `could not dial ${PHONE}`);
    expect(failureConverter.failureToError(failure, defaultPayloadConverter).message).to.equal(`could not dial ${PHONE}`);
  });

  it('encrypts a payload in microseconds: no key derivation per payload', async () => {
    const codec = new EncryptionCodec(keys('new'));
    const payloads = Array.from({ length: 2_000 }, (_, i) => defaultPayloadConverter.toPayload({ callId: String(i).padStart(32, '0'), to: PHONE }));
    const started = performance.now();
    await codec.decode(await codec.encode(payloads));
    // Generous for a shared CI machine; a scrypt or PBKDF2 per payload takes milliseconds each.
    expect((performance.now() - started) / payloads.length, 'ms per payload, both ways').to.be.below(1);
  });
});

describe('Temporal payload keys (TEMPORAL_PAYLOAD_KEYS)', () => {
  const production = {
    NODE_ENV: 'production',
    MONGODB_URI: 'mongodb://db/x',
    TEMPORAL_ADDRESS: 'temporal:7233',
    AUTH_SECRET: 'a-secret-of-at-least-32-characters-long!',
    DATA_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
  };

  it('is required in production; elsewhere absent unless set', () => {
    expect(() => loadConfig(production)).to.throw('TEMPORAL_PAYLOAD_KEYS must be set when NODE_ENV=production');
    expect(loadConfig({}).temporalPayloadKeys).to.equal(null);
    expect(() => requirePayloadEncryption(null)).to.throw('TEMPORAL_PAYLOAD_KEYS is not set');
    const k = key();
    expect(loadConfig({ ...production, TEMPORAL_PAYLOAD_KEYS: `p1:${k}` }).temporalPayloadKeys).to.deep.equal({
      currentKeyId: 'p1',
      keys: [{ id: 'p1', key: Buffer.from(k, 'base64') }],
    });
  });

  it('names the current key among several, and refuses what it cannot use without echoing a key', () => {
    const [a, b] = [key(), key()];
    expect(() => payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `a:${a},b:${b}` }, false)).to.throw(
      'TEMPORAL_PAYLOAD_KEY_CURRENT must name the key that encrypts, one of a, b',
    );
    expect(payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: ` a:${a} , b:${b} `, TEMPORAL_PAYLOAD_KEY_CURRENT: 'b' }, false)!.currentKeyId).to.equal('b');
    expect(() => payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `a:${a}`, TEMPORAL_PAYLOAD_KEY_CURRENT: 'c' }, false)).to.throw('does not hold');
    expect(() => payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `a:${a},a:${b}` }, false)).to.throw('twice');
    expect(() => payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: a }, false)).to.throw('id:base64');
    const short = crypto.randomBytes(16).toString('base64');
    let message = '';
    try {
      payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `a:${short}` }, false);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.contain('key "a" must be 32 bytes').and.not.contain(short);
    expect(() => payloadKeysConfig({ TEMPORAL_PAYLOAD_KEY_CURRENT: 'a' }, false)).to.throw('without TEMPORAL_PAYLOAD_KEYS');
  });

  it('round-trips through the variables a launcher hands its processes', () => {
    const keys = payloadKeysConfig({ TEMPORAL_PAYLOAD_KEYS: `a:${key()},b:${key()}`, TEMPORAL_PAYLOAD_KEY_CURRENT: 'a' }, false)!;
    expect(payloadKeysConfig(payloadKeysEnv(keys), false)).to.deep.equal(keys);
  });

  it('`npm start` makes its local key once, private to its owner, and keeps it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-key-'));
    try {
      expect(readLocalPayloadKey(dir)).to.equal(null);
      const made = ensureLocalPayloadKey(path.join(dir, 'data'));
      const file = path.join(dir, 'data', LOCAL_PAYLOAD_KEY_FILE);
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(made.keys[0]!.key.length).to.equal(32);
      expect(ensureLocalPayloadKey(path.join(dir, 'data'))).to.deep.equal(made);
      fs.chmodSync(file, 0o644);
      expect(() => readLocalPayloadKey(path.join(dir, 'data'))).to.throw('readable by other users');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
