// Links per page as real pages carry them: the distinct links (a/area/meta-refresh, resolved and
// normalized, after de-duplication within the page) of each of the 258 pages of the npm package
// htmlparser-benchmark, as shardcrawl's parser extracts them (mean 128, median 109, 18 to 419).
// With config outDegreeFrom "real", a page's out-degree is drawn from these counts instead of the
// log-normal, so a crawl of simweb meets the link density of the real web.

export const REAL_OUT_DEGREES: readonly number[] = [18,18,18,18,19,19,19,19,19,19,19,19,20,21,21,21,21,21,22,22,22,22,22,23,23,23,24,26,27,32,33,37,44,47,48,55,56,58,60,60,62,65,69,69,70,70,71,71,72,72,73,75,76,76,76,77,77,77,77,78,79,79,80,81,83,83,83,83,84,84,84,85,85,85,86,86,87,87,90,91,91,92,94,94,94,94,94,94,95,95,95,95,95,97,97,98,99,99,99,100,100,100,100,100,101,101,102,102,102,102,102,103,103,103,103,104,106,106,106,106,107,107,108,108,108,108,108,109,109,109,111,112,113,115,116,117,117,117,118,120,120,120,120,121,121,121,122,123,124,124,124,125,125,125,125,125,125,125,129,134,135,135,137,137,138,139,140,141,141,141,141,142,142,144,147,149,150,151,153,156,156,157,157,157,159,162,163,165,169,170,170,171,172,173,173,174,175,175,176,180,180,181,185,186,187,187,187,188,188,189,190,191,196,199,199,200,202,202,202,203,203,203,204,204,205,205,208,209,209,211,212,216,218,225,226,229,235,238,240,251,261,266,268,274,278,281,292,301,305,306,308,314,336,349,371,389,401,419];

/** One real page's link count, picked by a uniform draw u in [0, 1). */
export function realOutDegree(u: number): number {
  return REAL_OUT_DEGREES[Math.min(REAL_OUT_DEGREES.length - 1, Math.floor(u * REAL_OUT_DEGREES.length))]!;
}
