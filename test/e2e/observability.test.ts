import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { msToTs } from '@temporalio/common/lib/time';
import { parse as parseYaml } from 'yaml';
import { ROOT, TOOLS_DIR, freePort } from '../../scripts/infra/processes';
import { TEST_AUTH_CONFIG, jsonBody, type RunningApi } from '../support/api';
import { signUp } from '../support/accounts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { familyOf, parseExposition, valueOf, type Exposition } from '../support/prometheus-text';
import { createLocal, registerSearchAttributes, testServers } from '../support/servers';
import { printedMetricsUrl, startServiceProcess, type RunningServiceProcess } from '../support/service-processes';
import { until } from '../support/until';

const PROMTOOL = path.join(TOOLS_DIR, 'bin', 'promtool');
const DASHBOARD = path.join(ROOT, 'ops', 'grafana', 'voice-agents.json');
const ALERTS = path.join(ROOT, 'ops', 'prometheus', 'alerts.yml');

/**
 * The three processes as deployed (API, worker, media), each with its /metrics on a port of
 * its own and tracing to an OTLP/HTTP receiver in this process, on a namespace of their own
 * (so that the shared test workers cannot take their tasks).
 */
describe('metrics and traces of every process', function () {
  this.timeout(240_000);
  const processes: Partial<Record<'api' | 'worker' | 'media', RunningServiceProcess>> = {};
  const logs: Record<string, string> = {};
  let receiver: OtlpReceiver;
  let api: RunningApi;

  before(async () => {
    receiver = await startOtlpReceiver();
    const namespace = await freshNamespace();
    const local = createLocal();
    for (const role of ['api', 'worker', 'media'] as const) {
      logs[role] = path.join(testServers().tempDir, `${role}-observability-${Date.now()}.log`);
      const metricsPort = await freePort();
      processes[role] = await startServiceProcess({
        role,
        mongodbUri: testServers().mongodbUri,
        temporalAddress: local.address,
        namespace,
        authSecret: TEST_AUTH_CONFIG.secret,
        logFile: logs[role],
        env: { METRICS_PORT: String(metricsPort), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ...(role === 'worker' ? { WORKER_ROLES: 'ops' } : {}) },
      });
    }
    const baseUrl = processes.api!.url!;
    api = { baseUrl, media: null, request: (p, init) => fetch(baseUrl + p, init), close: async () => undefined };
  });
  after(async () => {
    await Promise.all(Object.values(processes).map((p) => p?.process.stop(5_000)));
    await receiver?.close();
  });

  it('traces one request from the API through its workflow to the activity, as one trace', async () => {
    const res = await api.request('/api/v1/health/roundtrip', jsonBody({ note: 'traced' }, (await signUp(api)).auth));
    expect(res.status).to.equal(200);
    const found = await until(
      async () => receiver.spans.find((s) => s.service === 'voice-agents-api' && s.name === 'POST /health/roundtrip'),
      (span) => span !== undefined,
      30_000,
      200,
    );
    expect(found, 'the API request span').to.not.equal(undefined);
    const request = found!;
    const trace = (): ReceivedSpan[] => receiver.spans.filter((s) => s.traceId === request.traceId);
    // The workflow's spans go through its sink after the task: wait for the activity's too.
    await until(
      async () => trace(),
      (spans) => spans.some((s) => s.name === 'RunActivity:recordProbe'),
      30_000,
      200,
    );
    const spans = trace();
    const named = (name: string) => {
      const span = spans.find((s) => s.name === name);
      expect(span, `span ${name} in ${JSON.stringify(spans.map((s) => `${s.service}:${s.name}`))}`).to.not.equal(undefined);
      return span!;
    };
    const start = named('StartWorkflow:roundTripWorkflow');
    const run = named('RunWorkflow:roundTripWorkflow');
    const activity = named('RunActivity:recordProbe');
    expect(request.attributes['voice_agents.operation']).to.equal('runRoundTrip');
    expect(start.service).to.equal('voice-agents-api');
    expect(run.service).to.equal('voice-agents-worker');
    expect(activity.service).to.equal('voice-agents-worker');
    // Each is a descendant of the request: walk the parents up from the activity.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ancestors = (span: ReceivedSpan): string[] => {
      const chain: string[] = [];
      for (let at = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) chain.push(at.name);
      return chain;
    };
    expect(ancestors(activity)).to.include.members(['RunWorkflow:roundTripWorkflow', 'StartWorkflow:roundTripWorkflow', 'POST /health/roundtrip']);
  });

  describe('/metrics', () => {
    const scraped: Record<string, { text: string; exposition: Exposition }> = {};
    const onApiPort: number[] = [];
    before(async () => {
      // At least one request of a known operation, timed; and the metrics path asked of the public port.
      expect((await api.request('/api/v1/health')).status).to.equal(200);
      for (const probe of ['/metrics', '/api/v1/metrics']) onApiPort.push((await api.request(probe)).status);
      for (const role of ['api', 'worker', 'media']) {
        const url = printedMetricsUrl(logs[role]);
        expect(url, `${role} binds its metrics to loopback`).to.match(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
        const res = await fetch(url);
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.include('text/plain');
        const text = await res.text();
        scraped[role] = { text, exposition: parseExposition(text) };
      }
    });

    it('serves each process on its own port, never on the public API port', () => {
      const ports = Object.values(logs).map((log) => new URL(printedMetricsUrl(log)).port);
      expect(new Set(ports).size).to.equal(3);
      expect(ports).to.not.include(new URL(api.baseUrl).port);
      expect(onApiPort).to.deep.equal([404, 404]);
    });

    it('times API requests by their OpenAPI operation', () => {
      const { exposition } = scraped.api;
      expect(exposition.types.get('voice_agents_http_request_duration_seconds')).to.equal('histogram');
      expect(
        valueOf(exposition, 'voice_agents_http_request_duration_seconds_count', { operation: 'getHealth', method: 'GET', status_class: '2xx' }),
      ).to.be.at.least(1);
      expect(
        valueOf(exposition, 'voice_agents_http_request_duration_seconds_count', { operation: 'runRoundTrip', method: 'POST', status_class: '2xx' }),
      ).to.equal(1);
      expect(valueOf(exposition, 'voice_agents_http_request_duration_seconds_count', { operation: 'unmatched' })).to.be.at.least(2); // the /metrics probes of the public port
      expect(exposition.types.get('voice_agents_queued_calls')).to.equal('gauge');
    });

    it("serves the Temporal SDK's own worker metrics beside ours in the worker and media processes", () => {
      for (const role of ['worker', 'media']) {
        const { exposition } = scraped[role];
        const temporal = [...exposition.types.keys()].filter((name) => name.startsWith('temporal_'));
        expect(temporal, role).to.include.members(['temporal_worker_task_slots_available', 'temporal_request_total']);
        expect(exposition.types.get('voice_agents_live_calls'), role).to.equal('gauge');
        expect(exposition.types.get('voice_agents_voice_to_voice_seconds'), role).to.equal('histogram');
      }
    });

    it('keeps every label bounded: no ids, numbers or addresses among the values', () => {
      const allowed = new Set([
        'operation',
        'method',
        'status_class',
        'trigger',
        'outcome',
        'provider',
        'kind',
        'le',
        'quantile',
        // Node's default metrics and the Temporal SDK's
        'version',
        'major',
        'minor',
        'patch',
        'space',
        'type',
        'namespace',
        'task_queue',
        'worker_type',
        'workflow_type',
        'activity_type',
        'operation',
        'service_name',
        'poller_type',
        'eager',
        'status_code',
        'otel_scope_name',
        'otel_scope_version',
        'service_version',
        'telemetry_sdk_language',
        'telemetry_sdk_name',
        'telemetry_sdk_version',
        'service_instance_id',
        'failure_reason',
        'exception',
      ]);
      for (const [role, { exposition }] of Object.entries(scraped)) {
        for (const sample of exposition.samples) {
          for (const [label, value] of Object.entries(sample.labels)) {
            expect(allowed.has(label), `${role}: label ${label} of ${sample.name}`).to.equal(true);
            expect(value, `${role}: ${sample.name}{${label}}`).to.not.match(/[0-9a-f]{24,}|\+\d{8,}|https?:\/\//);
          }
        }
      }
    });

    it("passes promtool's check of the text format", function () {
      if (!fs.existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} is missing: run npm run tools -- promtool`);
      for (const [role, { text }] of Object.entries(scraped)) {
        const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
        expect(check.status, `${role}: ${check.stdout}${check.stderr}`).to.equal(0);
      }
    });

    it('has every metric the dashboard and the alerting rules query', () => {
      const families = new Set(Object.values(scraped).flatMap(({ exposition }) => exposition.samples.map((s) => familyOf(exposition, s.name))));
      const samples = new Set(Object.values(scraped).flatMap(({ exposition }) => exposition.samples.map((s) => s.name)));
      const queried = [...dashboardExpressions(), ...ruleExpressions()].flatMap(metricNamesIn);
      expect(queried.length).to.be.greaterThan(10);
      for (const name of queried) expect(samples.has(name) || families.has(name), `${name} is queried but no process serves it`).to.equal(true);
    });

    it("passes promtool's check of the alerting rules", () => {
      if (!fs.existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} is missing: run npm run tools -- promtool`);
      const check = spawnSync(PROMTOOL, ['check', 'rules', ALERTS], { encoding: 'utf8' });
      expect(check.status, `${check.stdout}${check.stderr}`).to.equal(0);
      expect(check.stdout).to.match(/SUCCESS: \d+ rules found/);
    });
  });
});

function dashboardExpressions(): string[] {
  const dashboard = JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));
}

function ruleExpressions(): string[] {
  const rules = parseYaml(fs.readFileSync(ALERTS, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  return rules.groups.flatMap((group) => group.rules.map((rule) => String(rule.expr)));
}

/** Metric names in a PromQL expression: ours and the SDK's (functions, labels and keywords are not). */
function metricNamesIn(expr: string): string[] {
  return [...expr.replace(/\{[^}]*\}/g, '').matchAll(/\b((?:voice_agents|temporal|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[1]);
}

async function freshNamespace(): Promise<string> {
  const namespace = `observability-${Date.now()}`;
  const { workflowService } = createLocal().client;
  await workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await workflowService.describeNamespace({ namespace });
      await registerSearchAttributes(createLocal().connection, namespace);
      return namespace;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`namespace ${namespace} was not served`);
}
