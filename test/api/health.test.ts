import { expect } from 'chai';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../scripts/infra/processes';
import { startApi, type RunningApi } from '../support/api';

describe('GET /health', () => {
  let api: RunningApi;
  before(async () => (api = await startApi()));
  after(() => api.close());

  it('answers 200 with MongoDB and Temporal both reachable', async () => {
    const res = await api.request('/api/v1/health');
    expect(res.status).to.equal(200);
    const body = await res.json();
    expect(body.status).to.equal('ok');
    expect(body.mongodb.ok).to.equal(true);
    expect(body.temporal.ok).to.equal(true);
    expect(body.mongodb.latency_ms).to.be.a('number');
  });

  it('answers 503 naming Temporal when Temporal does not answer', async () => {
    // A real client to an address where nothing listens: the failure the check must see.
    const deadPort = await freePort();
    const temporal = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${deadPort}` }) });
    const down = await startApi({ temporal });
    try {
      const res = await down.request('/api/v1/health');
      expect(res.status).to.equal(503);
      const body = await res.json();
      expect(body.status).to.equal('degraded');
      expect(body.mongodb.ok).to.equal(true);
      expect(body.temporal.ok).to.equal(false);
      expect(body.temporal.error).to.be.a('string').and.not.empty;
    } finally {
      await down.close();
      await temporal.connection.close().catch(() => undefined);
    }
  });
});
