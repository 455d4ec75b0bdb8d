import { expect } from 'chai';
import { bundleWorkflows } from '../../workers/bootstrap';
import { workflowBundle } from '../support/servers';

/** Workflows that only tests and benchmarks use are not in the production bundle (npm run build, the workers). */
describe('workflow bundles: production and testing', function () {
  this.timeout(120_000);
  const TEST_ONLY = ['slotProbeWorkflow', 'signalEchoWorkflow', 'signalWaiterWorkflow'];

  it('production has every workflow type the services start and none of the test stand-ins', async () => {
    const { code } = await bundleWorkflows();
    for (const name of [
      'callWorkflow',
      'slotKeeperWorkflow',
      'batchWorkflow',
      'analyticsWorkflow',
      'webhookDeliveryWorkflow',
      'webhookRedeliveryWorkflow',
      'kycReviewWorkflow',
      'roundTripWorkflow',
    ]) {
      expect(code, name).to.include(`function ${name}(`);
    }
    for (const name of TEST_ONLY) expect(code, name).not.to.include(`function ${name}(`);
  });

  it("both carry the failure converter that moves failures' messages into their encrypted attributes (docs/decisions/0200)", async () => {
    for (const { code } of [await bundleWorkflows(), await workflowBundle()])
      expect(code).to.match(/DefaultFailureConverter\(\{\s*encodeCommonAttributes: true\s*\}\)/);
  });

  it("the tests' bundle adds the stand-ins", async () => {
    const { code } = await workflowBundle();
    for (const name of ['callWorkflow', ...TEST_ONLY]) expect(code, name).to.include(`function ${name}(`);
  });
});
