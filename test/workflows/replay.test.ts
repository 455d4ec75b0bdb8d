import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../support/servers';
import { testEncryption } from '../support/payload-keys';
import { ENCRYPTED_ENCODING } from '../../domain/shared/payload-encryption';

/**
 * The histories every long-lived workflow must keep replaying, by file and workflow type
 * (recorded end to end by test/support/record-histories.ts). A file missing here fails the run,
 * so that a history cannot be dropped silently; any other file in the folder is replayed too.
 */
const REQUIRED: Record<string, string> = {
  'roundtrip-no-delay': 'roundTripWorkflow',
  'roundtrip-with-timer': 'roundTripWorkflow',
  'kyc-review-approved': 'kycReviewWorkflow',
  // Before the call workflow upserted `CallStatus` (the `call-status-search-attribute` patch).
  'call-completed-before-status-upserts': 'callWorkflow',
  'call-outbound-completed': 'callWorkflow',
  'call-outbound-busy': 'callWorkflow',
  // Recorded with its payloads encrypted (docs/decisions/0200): replays with the codec installed.
  'call-outbound-completed-encrypted': 'callWorkflow',
  'call-inbound-completed': 'callWorkflow',
  'call-browser-completed': 'callWorkflow',
  // Before the call's store steps ran as local activities (the `call-store-steps-local` patch).
  'call-outbound-store-steps-as-activities': 'callWorkflow',
  'call-inbound-store-steps-as-activities': 'callWorkflow',
  // Before the dial ran as a local activity (the `call-dial-local` patch).
  'call-outbound-dial-as-activity': 'callWorkflow',
  // Before a call gave its slot back after its record was final (the `call-release-after-end` patch).
  'call-outbound-release-before-end': 'callWorkflow',
  'call-outbound-busy-release-before-end': 'callWorkflow',
  // The first run, ending in continue-as-new, and the run it continued as.
  'slot-keeper-continued-as-new': 'slotKeeperWorkflow',
  'slot-keeper-continued-run': 'slotKeeperWorkflow',
  'webhook-delivery-retried': 'webhookDeliveryWorkflow',
  'webhook-delivery-manual-retry': 'webhookDeliveryWorkflow',
  // The fan-out beside the webhooks worker: the first attempt a local activity (issue 18).
  'webhook-delivery-local-first-attempt': 'webhookDeliveryWorkflow',
  'batch-completed': 'batchWorkflow',
  // An order's check: completed by a later check; ended by the page's `settled` signal.
  'payment-check-completed': 'paymentCheckWorkflow',
  'payment-check-settled': 'paymentCheckWorkflow',
};

/**
 * Replays recorded histories (test/fixtures/histories, made by test/support/record-histories.ts)
 * against today's workflow code: a change that breaks determinism fails here. The replay worker
 * carries the payload codec (the tests' key), as every worker does: histories recorded encrypted
 * decode, plaintext ones pass through it.
 */
describe('workflow replay of recorded histories', () => {
  const dir = path.join(__dirname, '..', 'fixtures', 'histories');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  const read = (file: string) => JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));

  it('has every required history, each of its workflow type', () => {
    const types = Object.fromEntries(
      files.map((file) => [path.basename(file, '.json'), read(file).events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name]),
    );
    for (const [name, type] of Object.entries(REQUIRED)) expect(types[name], `${name}.json`).to.equal(type);
  });

  for (const file of files) {
    it(`replays ${file} without nondeterminism`, async () => {
      const workflowId = path.basename(file, '.json');
      const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle(), plugins: [testEncryption.plugin] }, [
        { workflowId, history: read(file) },
      ]);
      for await (const result of results) expect(result.error, String(result.error)).to.equal(undefined);
    });
  }

  it('the encrypted history is encrypted: no plaintext payload of ours, no phone number; without the codec it does not replay', async () => {
    const history = read('call-outbound-completed-encrypted.json');
    const text = JSON.stringify(history);
    const encodings = [...text.matchAll(/"encoding":"([^"]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString());
    expect(encodings.filter((e) => e === ENCRYPTED_ENCODING).length, 'encrypted payloads').to.be.above(10);
    // The call's input, its summary and its steps' results sat here as JSON before encryption.
    const input = history.events[0].workflowExecutionStartedEventAttributes.input.payloads[0];
    expect(Buffer.from(input.metadata.encoding, 'base64').toString()).to.equal(ENCRYPTED_ENCODING);
    expect(text).not.to.match(/\+91\d{10}/);
    expect(Buffer.from(input.data, 'base64').toString('latin1')).not.to.match(/\+91\d{10}|toNumber/);
    const results = Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, [{ workflowId: 'call-outbound-completed-encrypted', history }]);
    // The workflow task fails on the payload's unknown encoding; its message is in the failure's
    // encoded attributes (the bundle's failure converter), here unencrypted: base64 JSON.
    const unknownEncoding = Buffer.from('{"message":"Unknown encodin').toString('base64');
    for await (const result of results) expect(String(result.error)).to.contain('ReplayError').and.contain(unknownEncoding);
  });
});
