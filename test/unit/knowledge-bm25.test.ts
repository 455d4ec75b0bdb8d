import { expect } from 'chai';
import { BM25_B, BM25_K1, bm25Score, corpusStats, mergeStats, type ScoredTerms } from '../../domain/knowledge/bm25';
import { termCounts, tokenize } from '../../domain/knowledge/tokenizer';

const chunk = (text: string): ScoredTerms => {
  const terms = tokenize(text);
  return { length: terms.length, counts: termCounts(terms) };
};

describe('BM25 scoring', () => {
  const chunks = [
    chunk('Refunds reach your card within five working days.'),
    chunk('Delivery takes two to four days to metro cities.'),
    chunk('Our support desk answers calls from Monday to Saturday.'),
  ];
  const stats = corpusStats(chunks);

  it('uses k1 = 1.2 and b = 0.75', () => {
    expect([BM25_K1, BM25_B]).to.deep.equal([1.2, 0.75]);
  });

  it('computes the formula exactly for one term', () => {
    // "refunds": tf 1, df 1, N 3; |d| = 7 terms, average (7 + 7 + 6) / 3.
    const average = (7 + 7 + 6) / 3;
    const idf = Math.log(1 + (3 - 1 + 0.5) / (1 + 0.5));
    const expected = (idf * 1 * 2.2) / (1 + 1.2 * (1 - 0.75 + (0.75 * 7) / average));
    expect(chunks.map((c) => c.length)).to.deep.equal([7, 7, 6]);
    expect(bm25Score(['refunds'], chunks[0], stats)).to.be.closeTo(expected, 1e-12);
  });

  it('ranks the chunk that answers the question first and scores non-matching chunks 0', () => {
    const query = tokenize('When will my refunds reach my card?');
    const scores = chunks.map((c) => bm25Score(query, c, stats));
    expect(scores[0]).to.be.greaterThan(0);
    expect(scores.slice(1)).to.deep.equal([0, 0]);
  });

  it('weighs rare terms above common ones', () => {
    // "days" is in two chunks, "refunds" in one: the rare term decides.
    const days = bm25Score(['days'], chunks[0], stats);
    const refunds = bm25Score(['refunds'], chunks[0], stats);
    expect(refunds).to.be.greaterThan(days);
  });

  it('saturates repeated terms and favours shorter chunks', () => {
    const once = chunk('price list');
    const thrice = chunk('price price price list');
    const s = corpusStats([once, thrice, chunk('other words here')]);
    const ratio = bm25Score(['price'], thrice, s) / bm25Score(['price'], once, s);
    expect(ratio).to.be.greaterThan(1).and.lessThan(2.2); // never more than (k1 + 1) times
    const short = chunk('price');
    const long = chunk('price and a great many other words about something else entirely');
    const s2 = corpusStats([short, long]);
    expect(bm25Score(['price'], short, s2)).to.be.greaterThan(bm25Score(['price'], long, s2));
  });

  it('counts a repeated query term once', () => {
    expect(bm25Score(['refunds', 'refunds'], chunks[0], stats)).to.equal(bm25Score(['refunds'], chunks[0], stats));
  });

  it('merges the statistics of several bases as if they were one', () => {
    const merged = mergeStats([corpusStats(chunks.slice(0, 2)), corpusStats(chunks.slice(2))]);
    expect(merged.chunkCount).to.equal(stats.chunkCount);
    expect(merged.totalLength).to.equal(stats.totalLength);
    expect([...merged.documentFrequency].sort()).to.deep.equal([...stats.documentFrequency].sort());
  });

  it('scores 0 on an empty collection', () => {
    expect(bm25Score(['x'], chunk('x'), corpusStats([]))).to.equal(0);
  });
});
