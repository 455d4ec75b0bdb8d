import { expect } from 'chai';
import { HANGUP_ANSWER_XML, parseAnswerXml, streamAnswerXml } from '../../providers/telephony/answer-xml';

/** The Plivo XML the answer route writes, and the simulated provider's reading of it. */
describe('answer XML', () => {
  it('streams to a URL, escaped, bidirectional mu-law at 8 kHz, keeping the call alive', () => {
    const url = 'wss://media.example.in/telephony/streams/abc?token=x.y&z="<>"';
    const xml = streamAnswerXml(url);
    expect(xml).to.equal(
      '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">' +
        'wss://media.example.in/telephony/streams/abc?token=x.y&amp;z=&quot;&lt;&gt;&quot;</Stream></Response>',
    );
    expect(parseAnswerXml(xml)).to.deep.equal({ kind: 'stream', url, bidirectional: true });
  });

  it('reads Hangup, the first of the two elements, an empty Response, and refuses what is not a Response', () => {
    expect(parseAnswerXml(HANGUP_ANSWER_XML)).to.deep.equal({ kind: 'hangup' });
    expect(parseAnswerXml('<Response><Hangup /><Stream>wss://a</Stream></Response>')).to.deep.equal({ kind: 'hangup' });
    expect(parseAnswerXml('<Response>\n  <Stream bidirectional="false">\n wss://a/b \n</Stream>\n</Response>')).to.deep.equal({ kind: 'stream', url: 'wss://a/b', bidirectional: false });
    expect(parseAnswerXml('<Response></Response>')).to.deep.equal({ kind: 'nothing' });
    expect(parseAnswerXml('<Response/>')).to.deep.equal({ kind: 'nothing' });
    expect(parseAnswerXml('{}')).to.equal(null);
    expect(parseAnswerXml('')).to.equal(null);
  });
});
