import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { expect } from 'chai';
import { signatureHeader } from '../../domain/webhooks/signing';

interface Vector {
  secret: string;
  t: number;
  body: string;
  signature: string;
}

const root = path.resolve(__dirname, '..', '..');
const { vectors } = JSON.parse(fs.readFileSync(path.join(root, 'docs', 'webhook-signature-vectors.json'), 'utf8')) as { vectors: Vector[] };

/** The receiver's snippet exactly as the API guide (docs/api-guide.md, "Checking a delivery's signature") shows it, evaluated on its own. */
function guideVerifier(): (rawBody: Buffer | string, header: string, secret: string, nowSeconds?: number) => boolean {
  const guide = fs.readFileSync(path.join(root, 'docs', 'api-guide.md'), 'utf8');
  const block = /<!-- webhook-verification-snippet:start -->\s*```js\n([\s\S]*?)```\s*<!-- webhook-verification-snippet:end -->/.exec(guide);
  if (!block) throw new Error('docs/api-guide.md lost its webhook verification snippet');
  const context = vm.createContext({ require, Buffer });
  vm.runInContext(`${block[1]}\nthis.verify = verifyServiceWebhook;`, context);
  return context.verify as ReturnType<typeof guideVerifier>;
}

describe('webhook signatures', () => {
  it('sign as the published test vectors say', () => {
    expect(vectors.length).to.be.at.least(3);
    for (const v of vectors) expect(signatureHeader(v.secret, v.t, v.body), v.body.slice(0, 40)).to.equal(v.signature);
  });

  it('verify with the API guide snippet, from a Buffer or a string, within 300 s only', () => {
    const verify = guideVerifier();
    for (const v of vectors) {
      expect(verify(Buffer.from(v.body, 'utf8'), v.signature, v.secret, v.t)).to.equal(true);
      expect(verify(v.body, v.signature, v.secret, v.t + 300)).to.equal(true);
      expect(verify(v.body, v.signature, v.secret, v.t - 300)).to.equal(true);
      expect(verify(v.body, v.signature, v.secret, v.t + 301)).to.equal(false);
      expect(verify(`${v.body} `, v.signature, v.secret, v.t)).to.equal(false);
      expect(verify(v.body, v.signature, `${v.secret}x`, v.t)).to.equal(false);
      const tampered = v.signature.slice(0, -1) + (v.signature.endsWith('0') ? '1' : '0');
      expect(verify(v.body, tampered, v.secret, v.t)).to.equal(false);
      expect(verify(v.body, 'garbage', v.secret, v.t)).to.equal(false);
    }
  });
});
