import { expect } from 'chai';
import { HANGUP_ANSWER_XML, streamAnswerXml } from '../../providers/telephony/answer-xml';
import { readPlivoXml } from '../../simulators/telephony/plivo-xml';

/** The Plivo XML the answer route writes, and the simulated provider's reading of it. */
describe('answer XML', () => {
  it('streams to a URL, escaped, bidirectional mu-law at 8 kHz, keeping the call alive', () => {
    const url = 'wss://media.example.in/telephony/streams/abc?token=x.y&z="<>"';
    const xml = streamAnswerXml(url);
    expect(xml).to.equal(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">' +
        'wss://media.example.in/telephony/streams/abc?token=x.y&amp;z=&quot;&lt;&gt;&quot;</Stream></Response>',
    );
    expect(readPlivoXml(xml)).to.deep.equal({ kind: 'stream', url, bidirectional: true, contentType: 'audio/x-mulaw;rate=8000' });
  });

  it('reads Hangup, the first of the two elements, an empty Response, and refuses what is not a Response', () => {
    expect(readPlivoXml(HANGUP_ANSWER_XML)).to.deep.equal({ kind: 'hangup', reason: null });
    expect(readPlivoXml('<Response><Hangup /><Stream>wss://a</Stream></Response>')).to.deep.equal({ kind: 'hangup', reason: null });
    expect(readPlivoXml("<Response><Hangup reason='rejected'/></Response>")).to.deep.equal({ kind: 'hangup', reason: 'rejected' });
    expect(readPlivoXml('<Response>\n  <Stream bidirectional="false">\n wss://a/b \n</Stream>\n</Response>')).to.deep.equal({
      kind: 'stream',
      url: 'wss://a/b',
      bidirectional: false,
      contentType: null,
    });
    expect(readPlivoXml('<Response></Response>')).to.deep.equal({ kind: 'nothing' });
    expect(readPlivoXml('<Response/>')).to.deep.equal({ kind: 'nothing' });
    expect(readPlivoXml('{}')).to.equal(null);
    expect(readPlivoXml('')).to.equal(null);
    expect(readPlivoXml('<Response><Stream>wss://a</Response>')).to.equal(null);
    expect(readPlivoXml('<Response></Response><Response/>')).to.equal(null);
  });
});
