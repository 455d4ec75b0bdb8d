import { expect } from 'chai';
import { conferenceXml, dialXml } from '../../providers/telephony/answer-xml';
import { readPlivoXml } from '../../simulators/telephony/plivo-xml';
import { transferOf, transferSettingsOf, transferTool } from '../../media/conversation/transfer';
import { defaultRespond } from '../../simulators/llm/simulated-replies';
import type { AgentSettings } from '../../db/models/agent';

/** Transfer to a person (docs/decisions/0160): the XML the transfer routes write, the simulator's reading of it, the tool and the simulated model's rule. */
describe('transfer XML and the transfer_call tool', () => {
  it('dials one number with the ring timeout, time limit, caller ID and both callback URLs, escaped; the simulator reads it back', () => {
    const xml = dialXml({
      number: '+919812345678',
      callerId: '+918047180001',
      timeoutSeconds: 30,
      timeLimitSeconds: 600,
      actionUrl: 'https://api.example.in/t/action?a=1&b=2',
      callbackUrl: 'https://api.example.in/t/events',
    });
    expect(xml).to.equal(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Dial action="https://api.example.in/t/action?a=1&amp;b=2" method="POST" callbackUrl="https://api.example.in/t/events" callbackMethod="POST" timeout="30" timeLimit="600" callerId="918047180001" redirect="true"><Number>919812345678</Number></Dial></Response>',
    );
    expect(readPlivoXml(xml)).to.deep.equal({
      kind: 'dial',
      number: '+919812345678',
      actionUrl: 'https://api.example.in/t/action?a=1&b=2',
      callbackUrl: 'https://api.example.in/t/events',
      timeoutSeconds: 30,
      timeLimitSeconds: 600,
      callerId: '918047180001',
    });
  });

  it('reads a Dial without attributes, one without a Number, and a Conference room', () => {
    expect(readPlivoXml('<Response><Dial><Number>14155550100</Number></Dial></Response>')).to.deep.equal({
      kind: 'dial',
      number: '+14155550100',
      actionUrl: null,
      callbackUrl: null,
      timeoutSeconds: null,
      timeLimitSeconds: null,
      callerId: null,
    });
    expect(readPlivoXml('<Response><Dial timeout="10"></Dial></Response>')).to.deep.equal({ kind: 'nothing' });
    expect(readPlivoXml(conferenceXml('call-abc', { callbackUrl: 'https://x/y' }))).to.deep.equal({
      kind: 'conference',
      room: 'call-abc',
      callbackUrl: 'https://x/y',
    });
    expect(readPlivoXml(conferenceXml('a&b'))).to.deep.equal({ kind: 'conference', room: 'a&b', callbackUrl: null });
  });

  it('offers transfer_call only with destinations, their numbers as the enum, and reads its arguments', () => {
    const none = transferSettingsOf({} as AgentSettings['call']);
    expect(none).to.deep.equal({ destinations: [], handover_message: '', ring_timeout_seconds: 30 });
    expect(transferTool(none)).to.equal(null);
    const settings = {
      destinations: [
        { number: '+919800000001', description: 'Billing and refunds', mode: 'cold' as const },
        { number: '+919800000002', description: 'Technical support', mode: 'cold' as const },
      ],
      handover_message: '',
      ring_timeout_seconds: 30,
    };
    const tool = transferTool(settings)!;
    expect(tool.name).to.equal('transfer_call');
    expect((tool.parameters.properties as Record<string, { enum?: string[] }>).destination!.enum).to.deep.equal(['+919800000001', '+919800000002']);
    expect(tool.description).to.contain('+919800000002: Technical support');
    expect(transferOf({ destination: '+919800000002', reason: 'angry' }, settings)).to.deep.equal({ destination: settings.destinations[1], reason: 'angry' });
    expect(transferOf({ destination: '+919899999999' }, settings))
      .to.have.property('problem')
      .that.contains('+919800000001, +919800000002');
  });

  it('the simulated model transfers a caller who asks for a person or sounds angry, to the destination their words match', () => {
    const settings = {
      destinations: [
        { number: '+919800000001', description: 'Billing and refunds', mode: 'cold' as const },
        { number: '+919800000002', description: 'Technical support for the router', mode: 'cold' as const },
      ],
      handover_message: '',
      ring_timeout_seconds: 30,
    };
    const tool = transferTool(settings)!;
    const ask = (text: string) =>
      defaultRespond({
        model: 'm',
        messages: [{ role: 'user', content: text }],
        tools: [{ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }],
      });
    expect(ask('Let me talk to a person please')).to.deep.equal({
      text: 'Let me connect you to someone who can help.',
      toolCalls: [{ name: 'transfer_call', arguments: { destination: '+919800000001', reason: 'Let me talk to a person please' } }],
    });
    expect(ask('This is ridiculous, my router is still broken')).to.have.nested.property('toolCalls[0].arguments.destination', '+919800000002');
    expect(ask('Where is my order?')).to.not.have.property('toolCalls');
  });
});
