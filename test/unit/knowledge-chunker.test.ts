import { expect } from 'chai';
import { CHUNK_OVERLAP_CHARS, CHUNK_TARGET_CHARS, chunkText } from '../../domain/knowledge/chunker';

/** A distinct sentence of about 60 characters. */
const sentence = (i: number) => `Sentence number ${i} talks about topic ${i} in some detail here.`;
const paragraph = (from: number, count: number) => Array.from({ length: count }, (_, i) => sentence(from + i)).join(' ');

describe('knowledge chunker', () => {
  it('keeps a short text as one chunk at position 0', () => {
    expect(chunkText('  Opening hours: 9 to 6.  \n', 'plain')).to.deep.equal([{ position: 0, heading: null, text: 'Opening hours: 9 to 6.' }]);
  });

  it('packs paragraphs whole up to about 800 characters and never splits one that fits', () => {
    const paragraphs = Array.from({ length: 12 }, (_, i) => paragraph(i * 10, 4)); // ~250 characters each
    const chunks = chunkText(paragraphs.join('\n\n'), 'plain');
    expect(chunks.length).to.be.greaterThan(3);
    chunks.forEach((c, i) => expect(c.position).to.equal(i));
    for (const c of chunks) expect(c.text.length).to.be.at.most(CHUNK_TARGET_CHARS);
    for (const p of paragraphs)
      expect(
        chunks.some((c) => c.text.includes(p)),
        p.slice(0, 30),
      ).to.equal(true);
  });

  it('splits a long paragraph on sentence boundaries, with each sentence whole somewhere', () => {
    const text = paragraph(0, 40); // ~2500 characters, one paragraph
    const chunks = chunkText(text, 'plain');
    expect(chunks.length).to.be.within(3, 6);
    for (const c of chunks) {
      expect(c.text.length).to.be.at.most(CHUNK_TARGET_CHARS);
      expect(c.text)
        .to.match(/^Sentence number \d+/)
        .and.match(/here\.$/);
    }
    for (let i = 0; i < 40; i++)
      expect(
        chunks.some((c) => c.text.includes(sentence(i))),
        `sentence ${i}`,
      ).to.equal(true);
  });

  it('repeats the end of a chunk at the start of the next (at most 150 characters)', () => {
    const chunks = chunkText(paragraph(0, 40), 'plain');
    for (let i = 1; i < chunks.length; i++) {
      // The longest start of this chunk that ends the previous one: whole sentences, within the overlap.
      const previous = chunks[i - 1].text;
      const text = chunks[i].text;
      let shared = '';
      for (let k = Math.min(previous.length, text.length); k > 0 && !shared; k--) if (previous.endsWith(text.slice(0, k))) shared = text.slice(0, k);
      expect(shared, `chunk ${i}`).to.match(/^Sentence number \d+.*here\.$/);
      expect(shared.length).to.be.at.most(CHUNK_OVERLAP_CHARS);
    }
  });

  it('cuts a sentence longer than a chunk between words, and a word longer than a chunk anywhere', () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' '); // ~2700 characters, no full stop
    const chunks = chunkText(`${words}\n\n${'x'.repeat(2000)}`, 'plain');
    for (const c of chunks) expect(c.text.length).to.be.at.most(CHUNK_TARGET_CHARS);
    const joined = chunks.map((c) => c.text).join(' ');
    for (const w of ['word0', 'word199', 'word399']) expect(joined.split(/\s+/)).to.include(w);
    expect(
      chunks
        .filter((c) => /^x+$/.test(c.text))
        .map((c) => c.text.length)
        .reduce((a, b) => a + b),
    ).to.equal(2000);
  });

  it('ends sentences at the Devanagari danda too', () => {
    const hindi = Array.from({ length: 30 }, (_, i) => `यह वाक्य संख्या ${i} है और इसमें कुछ शब्द हैं।`).join(' ');
    const chunks = chunkText(hindi, 'plain');
    expect(chunks.length).to.be.greaterThan(1);
    for (const c of chunks) expect(c.text.endsWith('।')).to.equal(true);
  });

  it('keeps Markdown headings with their section, as a path, at the start of every chunk of it', () => {
    const markdown = [
      'Intro line before any heading.',
      '# Returns',
      'Send back unused items within 30 days.',
      '## Refunds',
      paragraph(0, 20),
      '## Exchanges ##',
      'Swap sizes once per order.',
      '# Shipping',
      'Orders ship daily.',
    ].join('\n');
    const chunks = chunkText(markdown, 'markdown');
    expect(chunks[0]).to.deep.equal({ position: 0, heading: null, text: 'Intro line before any heading.' });
    expect(chunks[1]).to.deep.equal({ position: 1, heading: 'Returns', text: 'Returns\n\nSend back unused items within 30 days.' });
    const refunds = chunks.filter((c) => c.heading === 'Returns > Refunds');
    expect(refunds.length).to.be.greaterThan(1);
    for (const c of refunds) {
      expect(c.text.startsWith('Returns > Refunds\n\nSentence number')).to.equal(true);
      expect(c.text.length).to.be.at.most(CHUNK_TARGET_CHARS);
    }
    expect(chunks.find((c) => c.heading === 'Returns > Exchanges')?.text).to.equal('Returns > Exchanges\n\nSwap sizes once per order.');
    expect(chunks.at(-1)).to.deep.include({ heading: 'Shipping', text: 'Shipping\n\nOrders ship daily.' });
  });

  it('treats "#" lines inside fenced code as code, and "#word" as text', () => {
    const markdown = ['# Setup', '```sh', '# install it', 'npm install', '```', '#hashtag stays text'].join('\n');
    const chunks = chunkText(markdown, 'markdown');
    expect(chunks).to.have.length(1);
    expect(chunks[0].heading).to.equal('Setup');
    expect(chunks[0].text).to.include('# install it').and.include('#hashtag stays text');
  });

  it('reads headings only in Markdown: plain text keeps "#" lines as text', () => {
    const chunks = chunkText('# Not a heading\nJust text.', 'plain');
    expect(chunks).to.deep.equal([{ position: 0, heading: null, text: '# Not a heading\nJust text.' }]);
  });

  it('normalises Windows and old Mac line ends, and answers no chunk for blank text', () => {
    expect(chunkText('one\r\n\r\ntwo\rthree', 'plain')[0].text).to.equal('one\n\ntwo\nthree');
    expect(chunkText(' \n\n \t', 'plain')).to.deep.equal([]);
    expect(chunkText('# Empty section\n\n', 'markdown')).to.deep.equal([]);
  });
});
