import { expect } from 'chai';
import { DEVELOPMENT_DATA_KEY_ID, LOCAL_MONGODB_URI, LOCAL_TEMPORAL_ADDRESS, loadConfig } from '../../config/env';

describe('configuration', () => {
  it('defaults run the local stack', () => {
    const config = loadConfig({});
    expect(config).to.include({ port: 8080, mediaPort: 8081, mongodbUri: LOCAL_MONGODB_URI, temporalAddress: LOCAL_TEMPORAL_ADDRESS });
    expect(config).to.include({ temporalNamespace: 'default', defaultTimezone: 'Asia/Kolkata', validateResponses: false });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '9000',
      MEDIA_PORT: '9001',
      MONGODB_URI: 'mongodb://db:27017/x',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'prod',
      VALIDATE_RESPONSES: 'yes',
      ROUND_TRIP_WAIT_MS: '1500',
    });
    expect(config).to.include({ port: 9000, mediaPort: 9001, mongodbUri: 'mongodb://db:27017/x', temporalAddress: 'temporal:7233' });
    expect(config).to.include({ temporalNamespace: 'prod', validateResponses: true, roundTripWaitMs: 1500 });
  });

  it("states the callers' data periods (30 days' grace, KYC documents 90 days); tests shorten them, production refuses that", () => {
    expect(loadConfig({}).privacy).to.deep.equal({ workspaceClosureGraceSeconds: 30 * 86_400, kycDocumentRetentionSeconds: 90 * 86_400 });
    expect(loadConfig({ WORKSPACE_CLOSURE_GRACE_SECONDS: '3', KYC_DOCUMENT_RETENTION_SECONDS: '2' }).privacy).to.deep.equal({
      workspaceClosureGraceSeconds: 3,
      kycDocumentRetentionSeconds: 2,
    });
    expect(() => loadConfig({ WORKSPACE_CLOSURE_GRACE_SECONDS: '0' })).to.throw('WORKSPACE_CLOSURE_GRACE_SECONDS');
    const production = { NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/x', TEMPORAL_ADDRESS: 't:7233', KYC_DOCUMENT_RETENTION_SECONDS: '2' };
    expect(() => loadConfig(production)).to.throw('KYC_DOCUMENT_RETENTION_SECONDS: for tests only');
  });

  it('validates responses in tests by default', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).validateResponses).to.equal(true);
  });

  it('fails loudly in production without the server addresses', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', TEMPORAL_ADDRESS: 't:7233' })).to.throw('MONGODB_URI');
    expect(() => loadConfig({ NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/x' })).to.throw('TEMPORAL_ADDRESS');
    expect(() => loadConfig({ NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/x', TEMPORAL_ADDRESS: 't:7233' })).to.throw('AUTH_SECRET');
  });

  it('takes the keys of stored secrets, required in production, a development key only outside it', () => {
    // The Temporal payload key is given: this is about the other key.
    const production = {
      NODE_ENV: 'production',
      MONGODB_URI: 'mongodb://db/x',
      TEMPORAL_ADDRESS: 't:7233',
      AUTH_SECRET: 's'.repeat(40),
      TEMPORAL_PAYLOAD_KEYS: `p1:${Buffer.alloc(32, 3).toString('base64')}`,
    };
    expect(() => loadConfig(production)).to.throw('DATA_KEYS must be set when NODE_ENV=production');
    const k1 = Buffer.alloc(32, 1).toString('base64');
    const k2 = Buffer.alloc(32, 2).toString('base64');
    const keys = loadConfig({ ...production, DATA_KEYS: `k1:${k1},k2:${k2}`, DATA_KEY_CURRENT: 'k2' }).dataKeys;
    expect(keys.current).to.equal('k2');
    expect([...keys.keys.keys()]).to.deep.equal(['k1', 'k2']);
    expect(() => loadConfig({ ...production, DATA_KEYS: `k1:${k1},k2:${k2}` })).to.throw('DATA_KEY_CURRENT');
    expect(() => loadConfig({ DATA_KEYS: 'k1:short' })).to.throw('DATA_KEYS');
    expect(() => loadConfig({ DATA_KEY_CURRENT: 'k1' })).to.throw('DATA_KEY_CURRENT is set without DATA_KEYS');
    expect(loadConfig({}).dataKeys.current).to.equal(DEVELOPMENT_DATA_KEY_ID);
  });

  it('takes the auth settings, with a development secret only outside production', () => {
    const config = loadConfig({
      AUTH_SECRET: 's'.repeat(40),
      SESSION_TTL_HOURS: '2',
      PASSWORD_HASH_LOG_N: '15',
      WELCOME_CREDITS_PAISE: '100',
      PASSWORD_HASH_CONCURRENCY: '2',
      PASSWORD_HASH_QUEUE: '10',
    });
    expect(config.auth).to.deep.equal({
      secret: 's'.repeat(40),
      sessionTtlSeconds: 7200,
      passwordHashLogN: 15,
      passwordHashConcurrency: 2,
      passwordHashQueue: 10,
    });
    expect(loadConfig({}).auth).to.include({ passwordHashConcurrency: 4, passwordHashQueue: 64 });
    expect(() => loadConfig({ PASSWORD_HASH_CONCURRENCY: '0' })).to.throw('PASSWORD_HASH_CONCURRENCY');
    expect(config.welcomeCreditsPaise).to.equal(100);
    expect(loadConfig({}).auth.secret).to.have.length.of.at.least(32);
    expect(loadConfig({}).auth.passwordHashLogN).to.equal(17);
    expect(loadConfig({}).welcomeCreditsPaise).to.equal(50_000);
    expect(() => loadConfig({ AUTH_SECRET: 'short' })).to.throw('AUTH_SECRET');
    expect(() => loadConfig({ PASSWORD_HASH_LOG_N: '9' })).to.throw('PASSWORD_HASH_LOG_N');
  });

  it('rejects malformed values, naming the variable', () => {
    expect(() => loadConfig({ PORT: '80a' })).to.throw('PORT');
    expect(() => loadConfig({ PORT: '70000' })).to.throw('PORT');
    expect(() => loadConfig({ VALIDATE_RESPONSES: 'maybe' })).to.throw('VALIDATE_RESPONSES');
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).to.throw('LOG_LEVEL');
    expect(() => loadConfig({ NODE_ENV: 'staging' })).to.throw('NODE_ENV');
    expect(() => loadConfig({ ROUND_TRIP_WAIT_MS: '0' })).to.throw('ROUND_TRIP_WAIT_MS');
  });

  it('TRUST_PROXY: none by default, a hop count or named proxies; never "any"', () => {
    expect(loadConfig({}).trustProxy).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).to.equal(false);
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).to.equal(1);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).to.deep.equal(['loopback', '10.0.0.0/8', '::1']);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).to.throw('TRUST_PROXY');
    expect(() => loadConfig({ TRUST_PROXY: '0' })).to.throw('TRUST_PROXY');
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.internal' })).to.throw('TRUST_PROXY');
  });

  it('CORS_ORIGINS: none by default, else exact origins', () => {
    expect(loadConfig({}).corsOrigins).to.deep.equal([]);
    expect(loadConfig({ CORS_ORIGINS: 'https://console.example.com, http://localhost:5173' }).corsOrigins).to.deep.equal([
      'https://console.example.com',
      'http://localhost:5173',
    ]);
    for (const bad of ['*', 'https://console.example.com/', 'console.example.com', 'https://console.example.com/app', 'ftp://x.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).to.throw('CORS_ORIGINS');
    }
  });

  it('METRICS_PORT: off unless set, on loopback unless METRICS_HOST says otherwise, never the API port', () => {
    expect(loadConfig({}).metrics).to.equal(null);
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).to.deep.equal({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' }).metrics).to.deep.equal({ host: '0.0.0.0', port: 0 });
    expect(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' })).to.throw('never served on the public API port');
    expect(() => loadConfig({ METRICS_PORT: '70000' })).to.throw('METRICS_PORT');
    expect(() => loadConfig({ METRICS_PORT: '9464', METRICS_HOST: 'metrics.internal' })).to.throw('METRICS_HOST');
  });

  it('OTEL_EXPORTER_OTLP_ENDPOINT: tracing off unless set, an http(s) base', () => {
    expect(loadConfig({}).otlpEndpoint).to.equal(null);
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).otlpEndpoint).to.equal('http://collector:4318');
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4317' })).to.throw('OTEL_EXPORTER_OTLP_ENDPOINT');
  });
});
