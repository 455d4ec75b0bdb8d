/**
 * Okapi BM25 over chunks whose term counts were computed at upload. k1 = 1.2 and b = 0.75
 * are the usual defaults (Lucene's, Elasticsearch's). IDF is Lucene's
 * ln(1 + (N - df + 0.5) / (df + 0.5)), which stays positive even for a term in most chunks,
 * so a matching chunk never scores below one that matches nothing.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export interface ScoredTerms {
  /** Number of terms of the chunk (stop words excluded), the |d| of the formula. */
  length: number;
  counts: ReadonlyMap<string, number>;
}

/** What the formula needs about the whole collection searched. */
export interface CorpusStats {
  chunkCount: number;
  totalLength: number;
  /** Chunks containing each term. */
  documentFrequency: ReadonlyMap<string, number>;
}

export function corpusStats(chunks: Iterable<ScoredTerms>): CorpusStats {
  let chunkCount = 0;
  let totalLength = 0;
  const documentFrequency = new Map<string, number>();
  for (const chunk of chunks) {
    chunkCount += 1;
    totalLength += chunk.length;
    for (const term of chunk.counts.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  }
  return { chunkCount, totalLength, documentFrequency };
}

/** Stats of several disjoint collections searched together (the bases an agent references). */
export function mergeStats(parts: readonly CorpusStats[]): CorpusStats {
  const documentFrequency = new Map<string, number>();
  for (const part of parts) {
    for (const [term, df] of part.documentFrequency) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + df);
  }
  return {
    chunkCount: parts.reduce((sum, p) => sum + p.chunkCount, 0),
    totalLength: parts.reduce((sum, p) => sum + p.totalLength, 0),
    documentFrequency,
  };
}

/** The BM25 score of one chunk for the query's distinct terms (0 when none occurs in it). */
export function bm25Score(queryTerms: readonly string[], chunk: ScoredTerms, stats: CorpusStats): number {
  if (stats.chunkCount === 0) return 0;
  const averageLength = stats.totalLength / stats.chunkCount || 1;
  const lengthNorm = BM25_K1 * (1 - BM25_B + (BM25_B * chunk.length) / averageLength);
  let score = 0;
  for (const term of new Set(queryTerms)) {
    const tf = chunk.counts.get(term);
    if (!tf) continue;
    const df = stats.documentFrequency.get(term) ?? 0;
    const idf = Math.log(1 + (stats.chunkCount - df + 0.5) / (df + 0.5));
    score += (idf * tf * (BM25_K1 + 1)) / (tf + lengthNorm);
  }
  return score;
}
