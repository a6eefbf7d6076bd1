"""Emit rule for `MrgSort` (the merge of two sorted runs, lower/sort_merge.py): Ascend C's `MrgSort` of two lists.

What Ascend C gives on Atlas A2 (910B), from the CANN API reference (hiascend.com, "Ascend C API", pages
atlasascendc_api_07_0847 MrgSort, 07_0841 Extract, 07_0091 Gather, 07_0233 GetMrgSortResult):
- `MrgSort(dst, MrgSortSrcList<T>{src1..src4}, MrgSort4Info{elementLengths[4], ifExhaustedSuspension,
  validBit, repeatTimes})` merges two to four lists, each already sorted, into one "by the score field from
  large to small" (descending). On A2 a list is Sort's output layout: for float, one 8-byte structure per
  element, the score and its uint32 index. validBit names the lists taken (0b11: two); an elementLengths entry
  is at most 4095 structures; ifExhaustedSuspension = false merges until every list is exhausted (true stops at
  the first exhausted list, GetMrgSortResult then says how many each list gave). T is half or float.
  The 4-argument `MrgSort4Info` constructor and the `MrgSort<T>(dst, srcList, srcInfo)` call are how CANN's
  own TopK implementation merges lists on A2.
- The order of equal scores is not stated in these pages. The twin (ks_twin/sort.h) takes the lower-numbered
  list first (assumed). Here it does not matter: every pair of run A has a lower index than every
  equal-keyed pair of run B (odd-even merge-split of tiles in index order), so "list 1 first" is the
  TileIR's "equal keys by increasing index".
- `Extract(dstValue, dstIndex(uint32), sorted, repeatTime)` splits a sorted list into scores and indices;
  the page says "64 float elements per repeat" on A2, read here as 64 floats of the packed list = 32
  structures (CANN's MoE sort kernels call it with count / 32 repeats); repeatTime <= 255.
- `Gather(dst, src, srcOffset(uint32, bytes from src), srcBaseAddr, count)`: dst[i] = the element at byte
  srcBaseAddr + srcOffset[i] of src (2- and 4-byte types on A2). There is no A2 API that interleaves two
  arrays (Concat on A2 only copies the scores for Sort), so the packing is a Gather.

The code, per row: the two runs' keys and indices (float32 and int32, the layout the rest of the kernel
keeps) are packed into 8-byte pairs chunk by chunk: 64 keys (negated when the sort is ascending, so that
MrgSort's descending order is ascending) and 64 indices are copied into a 512-byte stage, and one Gather with
a fixed table of byte offsets (written once per statement by the scalar unit: 128 SetValues) interleaves
them. One `MrgSort` of two lists (validBit 0b11) merges into a second packed area, `Extract` splits it into
the merged keys and indices (a `Muls` by -1 restores ascending keys). The packed areas take the `topkTmpBuf`
TBuf TopK uses in phase 1 (never live at once; tileir/scratch.py sizes it). `PipeBarrier<PIPE_V>` orders the
dependent vector calls. Runs must be constant multiples of 32 pairs, at most 4095 each.
"""

from __future__ import annotations

from ..core.errors import UnsupportedError
from ..tileir.expr import E, Var
from ..tileir.program import MrgSort
from ..tileir.scratch import MRGSORT_CHUNK, SORT_TMP, statement_scratch
from .vector import INSTR_RULES, Method

__all__ = ["MERGE_INSTR_RULES"]

EXTRACT_PAIRS = 32  # (key, index) pairs one Extract repeat splits (64 floats of the packed list)


def _scratch(m: Method, s: MrgSort, member: str) -> str:
    nbytes, purpose = statement_scratch(m.scope.kernel, s)[member]
    return m.scope.need_scratch(member, nbytes, purpose)


def _mrgsort(s: MrgSort, m: Method) -> None:
    sc, w = m.scope, m.w
    n, na = sc.static(s.src_keys.cols), sc.static(s.first)
    if n is None or na is None or n % (2 * EXTRACT_PAIRS) or na % EXTRACT_PAIRS or not 0 < na < n \
            or max(na, n - na) > 4095:
        raise UnsupportedError(f"kernel {sc.kernel.name}: MrgSort of runs of {s.first} and {s.src_keys.cols} - "
                               f"{s.first} pairs; the code merges constant runs of multiples of {EXTRACT_PAIRS} pairs "
                               f"(at most 4095 each, a whole row a multiple of {2 * EXTRACT_PAIRS}): pick such a tile")
    c = MRGSORT_CHUNK
    sk, si = sc.tensor_name(s.src_keys.buf), sc.tensor_name(s.src_indices.buf)
    dk, di = sc.tensor_name(s.keys.buf), sc.tensor_name(s.indices.buf)
    pairs, merged, stage, offs = (m.fresh(x) for x in ("pairs", "merged", "stage", "offsets"))
    j, r, ch, lens, info, lists = (m.fresh(x) for x in ("j", "row", "chunk", "lengths", "info", "lists"))
    w(f"AscendC::LocalTensor<float> {pairs} = {_scratch(m, s, SORT_TMP)}.Get<float>();  "
      f"// two runs of (key, index) pairs, 8 bytes each",
      f"AscendC::LocalTensor<float> {merged} = {pairs}[{2 * n}];  // the merged run, same layout",
      f"AscendC::LocalTensor<uint32_t> {stage} = {_scratch(m, s, 'mrgStageBuf')}.Get<uint32_t>();",
      f"AscendC::LocalTensor<uint32_t> {offs} = {_scratch(m, s, 'mrgOffsetBuf')}.Get<uint32_t>();",
      "AscendC::PipeBarrier<PIPE_ALL>();  // the offset table is written by the scalar unit")
    with w.block(f"for (int32_t {j} = 0; {j} < {c}; ++{j})"):
        w(f"{offs}.SetValue(2 * {j}, static_cast<uint32_t>(4 * {j}));  // pair j: key j of the chunk",
          f"{offs}.SetValue(2 * {j} + 1, static_cast<uint32_t>(4 * ({c} + {j})));  // then index j")
    w("AscendC::PipeBarrier<PIPE_ALL>();")
    neg = not s.largest
    with w.block(f"for (int32_t {r} = 0; {r} < {sc.expr(s.src_keys.rows)}; ++{r})"):
        at = {f: sc.expr(E.add(getattr(s, f).offset, E.mul(Var(r), getattr(s, f).stride)))
              for f in ("src_keys", "src_indices", "keys", "indices")}
        with w.block(f"for (int32_t {ch} = 0; {ch} < {n}; {ch} += {c})"):
            key_at = f"{sk}[{at['src_keys']} + {ch}]"
            if neg:
                w(f"AscendC::Muls({stage}.ReinterpretCast<float>(), {key_at}, -1.0f, {c});  "
                  "// keys negated: MrgSort's descending order is then ascending")
            else:
                w(f"AscendC::DataCopy({stage}.ReinterpretCast<float>(), {key_at}, {c});")
            w(f"AscendC::DataCopy({stage}[{c}], {si}[{at['src_indices']} + {ch}].ReinterpretCast<uint32_t>(), {c});",
              "AscendC::PipeBarrier<PIPE_V>();",
              f"AscendC::Gather({pairs}.ReinterpretCast<uint32_t>()[2 * {ch}], {stage}, {offs}, 0, {2 * c});  "
              "// interleave: key, index, key, index, ...",
              "AscendC::PipeBarrier<PIPE_V>();")
        w(f"uint16_t {lens}[4] = {{{na}, {n - na}, 0, 0}};",
          f"AscendC::MrgSortSrcList<float> {lists}({pairs}, {pairs}[{2 * na}], AscendC::LocalTensor<float>(), "
          "AscendC::LocalTensor<float>());",
          f"AscendC::MrgSort4Info {info}({lens}, false, 0b11, 1);  // two lists, merged to the end",
          f"AscendC::MrgSort({merged}, {lists}, {info});",
          "AscendC::PipeBarrier<PIPE_V>();",
          f"AscendC::Extract({dk}[{at['keys']}], {di}[{at['indices']}].ReinterpretCast<uint32_t>(), {merged}, "
          f"{n // EXTRACT_PAIRS});")
        if neg:
            w("AscendC::PipeBarrier<PIPE_V>();",
              f"AscendC::Muls({dk}[{at['keys']}], {dk}[{at['keys']}], -1.0f, {n});  // the keys back")
        w("AscendC::PipeBarrier<PIPE_V>();")


MERGE_INSTR_RULES = {MrgSort: _mrgsort}
INSTR_RULES.update(MERGE_INSTR_RULES)
