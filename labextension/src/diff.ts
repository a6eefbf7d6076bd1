/**
 * Which lines of the new text are not in the old one: a line-level longest
 * common subsequence after trimming the common head and tail.
 */

/** Past this many cells the middle is marked changed without a table. */
const MAX_TABLE_CELLS = 4_000_000;

/** 0-based indices of the lines of `after` that are new or edited relative to `before`. */
export function changedLines(before: string | undefined, after: string): number[] {
  const b = after.split('\n');
  if (before === undefined) {
    return [];
  }
  const a = before.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) {
    tail++;
  }
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  if (midB.length === 0) {
    // Pure deletion: mark the line where the removed text was, if any.
    return midA.length > 0 && head < b.length ? [head] : [];
  }
  if (midA.length === 0 || midA.length * midB.length > MAX_TABLE_CELLS) {
    return midB.map((_, i) => head + i);
  }
  const n = midA.length;
  const m = midB.length;
  // lcs[i][j] = LCS length of midA[i:] and midB[j:], one flat array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] =
        midA[i] === midB[j]
          ? lcs[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(lcs[(i + 1) * (m + 1) + j], lcs[i * (m + 1) + j + 1]);
    }
  }
  const changed: number[] = [];
  let i = 0;
  let j = 0;
  while (j < m) {
    if (i < n && midA[i] === midB[j]) {
      i++;
      j++;
    } else if (i < n && lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1]) {
      i++;
    } else {
      changed.push(head + j);
      j++;
    }
  }
  return changed;
}
