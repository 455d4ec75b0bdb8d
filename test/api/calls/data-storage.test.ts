import { expect } from 'chai';
import { OPEN_HOURS, useCallStack, type CallRecord, type TimelineEntry } from '../../support/call-stack';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { until } from '../../support/until';

/** What the callee says: a phone number, an email, a card number (Luhn), a PAN and an Aadhaar number. */
const PERSONAL_LINE = 'My number is 98765 43210, mail asha.rao@example.com, card 4111 1111 1111 1111, PAN ABCPE1234F, Aadhaar 2345 6789 0123.';
const RAW_IDENTIFIERS = ['98765 43210', 'asha.rao@example.com', '4111 1111 1111 1111', 'ABCPE1234F', '2345 6789 0123'];

type Call = CallRecord & { transcript: { role: string; text: string }[]; summary: string | null; extracted: unknown };
type Delivery = { id: string; status: string; event_type: string };

const holdsIdentifier = (value: unknown) => RAW_IDENTIFIERS.filter((raw) => JSON.stringify(value).includes(raw));

/**
 * `call.data_storage` on real calls through the simulators (docs/decisions/0213): real API,
 * workers, media service, FerretDB and Temporal; a real HTTP receiver for the agent's webhooks.
 * Each mode: what the webhooks carried, and what the call record, its timeline, its recording
 * and its stored delivery bodies keep afterwards.
 */
describe('What a call keeps (agent call.data_storage)', function () {
  this.timeout(180_000);
  const stack = useCallStack({ numberPrefix: '+9178' });
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await startWebhookReceiver();
  });
  after(async () => receiver?.close());

  const http = (path: string) => stack.api.request(`/api/v1${path}`, { headers: stack.owner.auth });
  /** Places a recorded, summarized call whose callee says PERSONAL_LINE; answers it once its deliveries are all over. */
  const callWith = async (dataStorage: string | undefined) => {
    const agent = await stack.createAgent({
      welcome_message: 'Hello, this is Asha.',
      call: { ...OPEN_HOURS, record: true, ...(dataStorage ? { data_storage: dataStorage } : {}) },
      analytics: { summarize: true, extractions: [] },
      webhook_url: `${receiver.url}/hooks`,
    });
    expect(agent.call.data_storage).to.equal(dataStorage ?? 'everything');
    const to = stack.callee({ kind: 'answer', answerAfterSeconds: 1, conversation: [{ say: PERSONAL_LINE }, { say: 'Okay thanks, bye.' }] });
    const placed = await stack.place(agent.id, to);
    const { events } = await stack.finished(placed.id);
    const deliveries = await until(
      async () => ((await (await http(`/webhooks/deliveries?call_id=${placed.id}&limit=200`)).json()) as { items: Delivery[] }).items,
      (items) => items.length === events.length && items.every((d) => d.status === 'delivered'),
      60_000,
    );
    const sent = receiver.received.filter((r) => (JSON.parse(r.rawBody) as { call_id: string }).call_id === placed.id).map((r) => JSON.parse(r.rawBody));
    const storedBodies = await Promise.all(
      deliveries.map(async (d) => ((await (await http(`/webhooks/deliveries/${d.id}`)).json()) as { request_body: unknown }).request_body),
    );
    return {
      call: await stack.getCall<Call>(placed.id),
      timeline: await stack.timeline(placed.id),
      recording: await http(`/calls/${placed.id}/recording`),
      sent,
      storedBodies,
    };
  };
  const completedOf = (bodies: unknown[]) => (bodies as { type: string; data: { call: Record<string, unknown> } }[]).find((b) => b.type === 'call.completed')!;
  const userTurn = (timeline: TimelineEntry[]) => timeline.find((e) => e.type === 'user.turn' && e.message.startsWith('My number'));

  it('everything (the default): the transcript, summary, events, bodies and recording keep every word', async () => {
    const kept = await callWith(undefined);
    expect(kept.call.transcript.map((t) => t.text)).to.include(PERSONAL_LINE);
    expect(kept.call.summary).to.be.a('string');
    expect(userTurn(kept.timeline)?.message).to.equal(PERSONAL_LINE);
    expect(holdsIdentifier(kept.storedBodies)).to.deep.equal(RAW_IDENTIFIERS);
    expect(kept.recording.status).to.equal(200);
  });

  it('everything_except_pii: the webhooks carry the words once; what is stored has them masked, and there is no recording', async () => {
    const kept = await callWith('everything_except_pii');
    // Sent as it happened: the call.completed webhook carries the whole transcript.
    expect(holdsIdentifier(completedOf(kept.sent).data.call.transcript_text)).to.deep.equal(RAW_IDENTIFIERS);
    // Stored masked: the record, the timeline and the delivery bodies.
    const line = kept.call.transcript.find((t) => t.text.startsWith('My number'))!.text;
    expect(line).to.equal('My number is [phone], mail [email], card [card], PAN [pan], Aadhaar [aadhaar].');
    expect(kept.call.summary).to.be.a('string').and.include('[phone]');
    expect(userTurn(kept.timeline)?.message).to.equal(line);
    expect(holdsIdentifier({ call: kept.call, timeline: kept.timeline, bodies: kept.storedBodies })).to.deep.equal([]);
    expect(JSON.stringify(completedOf(kept.storedBodies).data.call.transcript_text)).to.include('[card]');
    expect(kept.recording.status).to.equal(404);
  });

  it('basic_attributes_only: the webhooks carry the words once; afterwards no transcript, summary, event text or recording is kept', async () => {
    const kept = await callWith('basic_attributes_only');
    expect(holdsIdentifier(completedOf(kept.sent).data.call.transcript_text)).to.deep.equal(RAW_IDENTIFIERS);
    expect(kept.sent.filter((b) => b.type === 'user.turn').map((b) => b.data.message)).to.include(PERSONAL_LINE);

    expect(kept.call).to.include({ status: 'completed', summary: null, extracted: null });
    expect(kept.call.transcript).to.deep.equal([]);
    expect(kept.call.duration_seconds).to.be.a('number');
    expect(kept.call.cost_paise).to.be.a('number');
    expect(kept.timeline.filter((e) => ['user.turn', 'agent.reply', 'welcome'].includes(e.type) && e.message !== '')).to.deep.equal([]);
    expect(kept.timeline.map((e) => e.type)).to.include.members(['call.started', 'user.turn', 'call.ended', 'call.completed']);
    const storedCompleted = completedOf(kept.storedBodies).data.call;
    expect(storedCompleted).to.not.have.any.keys('transcript', 'transcript_text', 'summary', 'extracted');
    expect(storedCompleted).to.include({ status: 'completed' });
    expect(holdsIdentifier({ call: kept.call, timeline: kept.timeline, bodies: kept.storedBodies })).to.deep.equal([]);
    expect(kept.recording.status).to.equal(404);
  });
});
