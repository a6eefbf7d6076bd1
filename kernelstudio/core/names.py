"""Names that reach generated C++ and the file system: one rule, one list of symbols to avoid,
and a check that a file lies inside the directory it is written to.

- `check_name`: a design / kernel / tensor name is an ASCII C identifier of at most NAME_MAX
  characters (it becomes a C++ identifier, `<name>.json`, `<name>.bin` and a CMake target).
- `C_SYMBOLS`: identifiers generated code must not declare at global scope or as parameters, since
  the C library, C++ or the Ascend C API (and the CPU twin's launcher) already use them. The code
  generator renames kernels and variables that would collide (`exp` -> `exp_custom`).
- `inside`: the resolved path of `rel` under `root`, or an InputError if it would leave `root`.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import DTypeError, InputError, UnsupportedError

__all__ = ["NAME_MAX", "C_SYMBOLS", "CANN_BUILTIN_OPS", "check_name", "inside", "sanitize", "pascal_case",
           "is_builtin_op", "cann_snake", "op_name"]

NAME_MAX = 64
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# <math.h>/<cmath> (including POSIX extras such as j0/y0 and GNU gamma), <stdlib.h>, <stdio.h>,
# <string.h>, <strings.h>, <unistd.h>, <time.h>, <signal.h>: anything a kernel's global name or a
# parameter could clash with once g++ pulls these headers in.
_LIBC = """
abs labs llabs fabs fabsf fabsl div ldiv lldiv exp exp2 expm1 expf exp10 log log2 log10 log1p logb logf
sqrt sqrtf cbrt pow powf sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh sincos
erf erfc erff tgamma lgamma gamma ceil floor round trunc fmod remainder remquo fmax fmin fdim fma hypot
ldexp frexp modf nan nanf nearbyint rint lrint llrint lround llround scalbn scalbln ilogb copysign
nextafter nexttoward isnan isinf isfinite isnormal signbit fpclassify j0 j1 jn y0 y1 yn drem significand
finite pow10
malloc calloc realloc free aligned_alloc exit _Exit abort atexit quick_exit system getenv setenv
atoi atol atoll atof strtol strtoul strtod strtof qsort bsearch rand srand random srandom
printf fprintf sprintf snprintf vprintf puts putchar getchar gets fgets fputs fputc fgetc getc putc
scanf sscanf fscanf fopen fclose fflush fread fwrite fseek ftell rewind remove rename tmpfile perror
stdin stdout stderr memcpy memset memmove memcmp memchr strlen strcpy strncpy strcmp strncmp strcat
strncat strchr strrchr strstr strtok strdup strerror index rindex bzero bcopy ffs
read write open close pipe fork sleep usleep alarm pause dup dup2 link unlink access chdir getpid
time clock difftime mktime ctime gmtime localtime strftime signal raise kill assert errno
select poll wait exp2f truncate
"""
# C++ keywords and alternative tokens, and names the std headers put at global scope.
_CXX = """
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires return short signed sizeof static static_assert
static_cast struct switch template this thread_local throw true try typedef typeid typename union
unsigned using virtual void volatile wchar_t while xor xor_eq NULL EOF std main
int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ptrdiff_t intptr_t uintptr_t
"""
# The Ascend C API and the CPU launcher: macros, types and free functions generated code names.
_ASCENDC = """
AscendC GM_ADDR __gm__ __aicore__ __global__ half bfloat16_t TPipe TQue TBuf TQueBind LocalTensor
GlobalTensor TPosition QuePosition DataCopy DataCopyPad DataCopyParams DataCopyExtParams Duplicate
Add Sub Mul Div Max Min Adds Muls Maxs Mins Exp Ln Abs Sqrt Rsqrt Reciprocal Relu LeakyRelu Cast Select
Compare ReduceSum ReduceMax ReduceMin WholeReduceSum WholeReduceMax BlockReduceSum Brcb Gather
PipeBarrier SetFlag WaitFlag CrossCoreSetFlag CrossCoreWaitFlag GetBlockIdx GetBlockNum GetSubBlockIdx
GetUserWorkspace Mmad LoadData Fixpipe Matmul MatmulType TCubeTiling GET_TILING_DATA
BEGIN_TILING_DATA_DEF END_TILING_DATA_DEF TILING_DATA_FIELD_DEF REGISTER_TILING_DATA_CLASS
ICPU_RUN_KF ICPU_SET_TILING_KEY GmAlloc GmFree ReadFile WriteFile SetKernelMode KernelMode
optiling ops ge OpDef OP_ADD pipe tiling workspace usrWorkspace blockIdx subBlockIdx blockNum
matmul matmulObj cubeTiling ks_twin tilingData
"""
C_SYMBOLS = frozenset((_LIBC + _CXX + _ASCENDC).split())


def check_name(what: str, name: object) -> str:
    """`name` if it is a valid design/kernel/tensor name, else an error naming `what` and the rule."""
    if not isinstance(name, str):
        raise DTypeError(f"{what}: name must be a str, got {type(name).__name__} {name!r}")
    if not _IDENT.match(name):
        raise UnsupportedError(
            f"{what}: name {name!r} is not a C identifier; use ASCII letters, digits and '_' (not starting "
            "with a digit): names become C++ identifiers and file names in the generated project")
    if len(name) > NAME_MAX:
        raise UnsupportedError(f"{what}: name {name[:20]!r}... has {len(name)} characters; at most {NAME_MAX} "
                               "are allowed (it names files and C++ symbols); choose a shorter name")
    return name


def inside(root: Path, rel: str | Path) -> Path:
    """`root / rel`, proven to lie inside `root` after resolving `..` and symbolic links."""
    base = Path(root).resolve()
    path = (base / rel).resolve()
    if path != base and base not in path.parents:
        raise InputError(f"file {str(rel)!r} would be written to {path}, outside {base}; "
                         "names must not contain path separators or '..'")
    return path


# ---- operator names ---------------------------------------------------------------------------
# Operator types CANN already ships (the AOE-tunable AI Core list, the ops-nn / ops-math /
# ops-transformer libraries and the common GE graph ops). A custom op of the same type would shadow
# or be shadowed by the built-in one, so `op_type` appends "Custom" to a generated name that matches
# one of these (compared without regard to case).
_CANN_OPS = """
Abs AccumulateNV2 Acos Acosh Add AddN Adds AddLayerNorm AddRmsNorm Addcdiv Addcmul ApplyRotaryPosEmb
ArgMax ArgMaxV2 ArgMin Asin Atan AvgPool AvgPoolV2 AvgPool3D BatchMatMul BatchMatMulV2 BatchMatMulV3
BatchNorm BatchNorm3D BiasAdd BNInfer BroadcastTo Cast Ceil ClipByValue Concat ConcatD ConcatV2 Const
Conv1D Conv2D Conv2DBackpropInput Conv2DBackpropFilter Conv3D Cos Cosh Cumsum Data Deconvolution
DepthwiseConv2D Div DivNoNan Dropout DropOutDoMask Elu Equal Erf Erfc Exp Expand ExpandD ExpandDims
FastGelu FastGeluV2 FatreluMul Fill FlashAttentionScore Flatten Floor FloorDiv FullyConnection Gather
GatherV2 GatherElements GeGluV2 Gelu GeluMul GeluV2 GEMM Greater GreaterEqual GroupNorm GroupNormSilu
Identity IncreFlashAttention InstanceNorm IsFinite IsInf IsNan L2Loss LayerNorm LayerNormV3 LayerNormV4
LeakyRelu Less LessEqual Log Log1p LogSigmoid LogSoftmax LogSoftmaxV2 LogicalAnd LogicalNot LogicalOr
MatMul MatMulV2 MatMulV3 Max Maximum MaxPool MaxPool3D MaxPoolV3 Mean Min Minimum Mish Mul Muls Neg
NotEqual OneHot OnesLike Pack Pad PadV3 Pow PRelu PromptFlashAttention Range RealDiv Reciprocal ReduceAll
ReduceAllD ReduceMax ReduceMaxD ReduceMean ReduceMeanD ReduceMin ReduceMinD ReduceProd ReduceSum
ReduceSumD Relu Relu6 ReluV2 Reshape Round RmsNorm RotaryMul Rsqrt ScatterNd Select SelectV2 Selu Shape
Sigmoid Sign Silu Sin Sinh Slice Softmax SoftmaxV2 Softplus Softsign Split SplitV SplitVD Sqrt Square
SquaredDifference Squeeze StridedSlice StridedSliceD Sub Swish SwiGlu Tan Tanh Tile TileD TopK TopKV2
Transpose TransposeD Unpack Unsqueeze Where ZerosLike
"""
CANN_BUILTIN_OPS = frozenset(_CANN_OPS.split())
_CANN_FOLDED = frozenset(n.lower() for n in CANN_BUILTIN_OPS)
CUSTOM_SUFFIX = "Custom"


def sanitize(name: str, default: str = "kernel") -> str:
    """A lower_snake C identifier made from any text: `"my-op 2"` -> `"my_op_2"`, `"2x"` -> `"op_2x"`.

    CamelCase words are split (`"AttnProlog"` -> `"attn_prolog"`); `default` stands in for a name
    with no letters or digits; the result is cut to NAME_MAX characters."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    s = re.sub(r"[^0-9A-Za-z]+", "_", s).strip("_").lower()
    if not s:
        s = default
    if s[0].isdigit():
        s = "op_" + s
    return s[:NAME_MAX].rstrip("_")


def pascal_case(name: str) -> str:
    """`mla_prolog_lite` -> `MlaPrologLite`: the CANN spelling of an operator type."""
    return "".join(w[:1].upper() + w[1:] for w in sanitize(name).split("_"))


def is_builtin_op(op_type: str) -> bool:
    """Whether `op_type` names (up to case) an operator CANN already ships."""
    return op_type.lower() in _CANN_FOLDED


def cann_snake(op_type: str) -> str:
    """The lower_with_under name CANN's msOpGen derives from an op type (`AddCustom` -> `add_custom`,
    `Abc2DEf` -> `abc2d_ef`): it names the kernel function and the op_host / op_kernel files."""
    out = ""
    for i, ch in enumerate(op_type):
        if i and ch.isupper() and op_type[i - 1] != "_" and (
                op_type[i - 1].islower() or (i + 1 < len(op_type) and op_type[i + 1].islower())):
            out += "_"
        out += ch.lower()
    return out


def op_name(name: str) -> tuple[str, str, bool]:
    """(snake name, op type, renamed) of an operator called `name`.

    The op type is PascalCase (`attn_prolog` -> `AttnProlog`); the snake name is the one CANN derives
    from it (`cann_snake`), so the files and the kernel function match what msOpGen expects. When the
    op type is a CANN built-in (or the snake name a C/C++/Ascend C symbol) the op type gets the
    `Custom` suffix and `renamed` is True."""
    op_type = pascal_case(name)
    renamed = is_builtin_op(op_type) or cann_snake(op_type) in C_SYMBOLS
    if renamed:
        op_type += CUSTOM_SUFFIX
    return cann_snake(op_type), op_type, renamed
