import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../config/env';
import { temporalConnectionOptions } from '../../domain/shared/temporal';

/**
 * Temporal Cloud and TLS frontends: the variables config/env.ts reads, and the connection
 * options every process builds from them (API key, mTLS client certificate, private CA).
 */
describe('Temporal credentials (Temporal Cloud, TLS)', () => {
  const base = { TEMPORAL_ADDRESS: 'acme.a1b2c.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'acme.a1b2c' };

  it('connects in plain gRPC when no credential is set', () => {
    const config = loadConfig(base);
    expect(config.temporalSecurity).to.equal(null);
    expect(temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, null)).to.deep.equal({
      address: base.TEMPORAL_ADDRESS,
    });
  });

  it('sends an API key over TLS, with the namespace header Temporal Cloud routes by', () => {
    const config = loadConfig({ ...base, TEMPORAL_API_KEY: 'tmprl-key' });
    expect(temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, null)).to.deep.equal({
      address: base.TEMPORAL_ADDRESS,
      tls: {},
      apiKey: 'tmprl-key',
      metadata: { 'temporal-namespace': 'acme.a1b2c' },
    });
  });

  it('presents a client certificate (mTLS), trusting a private CA under a server name when given', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vas-tls-'));
    try {
      for (const [file, text] of [
        ['client.pem', 'CERT'],
        ['client.key', 'KEY'],
        ['ca.pem', 'CA'],
      ])
        fs.writeFileSync(path.join(dir, file), text);
      const config = loadConfig({
        ...base,
        TEMPORAL_TLS_CERT: path.join(dir, 'client.pem'),
        TEMPORAL_TLS_KEY: path.join(dir, 'client.key'),
        TEMPORAL_TLS_CA: path.join(dir, 'ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      });
      const options = temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, null) as {
        tls: { clientCertPair: { crt: Buffer; key: Buffer }; serverRootCACertificate: Buffer; serverNameOverride: string };
      };
      expect([
        options.tls.clientCertPair.crt.toString(),
        options.tls.clientCertPair.key.toString(),
        options.tls.serverRootCACertificate.toString(),
        options.tls.serverNameOverride,
      ]).to.deep.equal(['CERT', 'KEY', 'CA', 'temporal.internal']);
      expect(options).not.to.have.property('apiKey');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('turns TLS on alone with TEMPORAL_TLS=true', () => {
    const config = loadConfig({ ...base, TEMPORAL_TLS: 'true' });
    expect(temporalConnectionOptions(config.temporalAddress, config.temporalNamespace, config.temporalSecurity, null)).to.deep.equal({
      address: base.TEMPORAL_ADDRESS,
      tls: {},
    });
  });

  it('refuses half a certificate pair, and credentials without TLS', () => {
    expect(() => loadConfig({ ...base, TEMPORAL_TLS_CERT: '/x/client.pem' })).to.throw('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together');
    expect(() => loadConfig({ ...base, TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' })).to.throw('credentials travel only over TLS');
    expect(() => loadConfig({ ...base, TEMPORAL_TLS: 'maybe' })).to.throw('TEMPORAL_TLS must be true or false');
  });
});
