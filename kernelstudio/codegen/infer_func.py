"""Graph-mode inference of one operator, written into its `op_host/<name>.cpp`: InferShape and InferDataType.

CANN's graph engine calls the functions an OpDef registers with `SetInferShape` (a `gert::InferShapeContext`:
the input shapes, an output shape to set per output) and `SetInferDataType` (a `gert::InferDataTypeContext`)
when it builds a graph; graph mode refuses an operator without them. The shape rule is the program's: every
output has its lowered shape, except for the row dimensions of an operator that takes its rows at run time
(`Kernel.runtime_rows`), which are the inputs' (the same in every tensor that has them). The data types are
the program's, whatever the shapes. Each function fails (GRAPH_FAILED) for inputs the operator does not take:
another rank, another fixed dimension, row dimensions that differ between inputs, another data type.

A dimension the graph does not know yet (-1) passes through as -1: a row dimension to the outputs that have it;
a fixed dimension must be known.
"""

from __future__ import annotations

from ..tileir.hints import RuntimeRows
from ..tileir.program import Program
from .writer import Writer, camel

__all__ = ["infer_functions", "infer_registration", "INFER_SHAPE", "INFER_DTYPE", "GE_DTYPES"]

INFER_SHAPE = "ge::InferShape"  # the names the OpDef registers
INFER_DTYPE = "ge::InferDataType"


# ge::DataType of each element type (OpDef, InferDataType, the launcher's check)
GE_DTYPES = {"float16": "ge::DT_FLOAT16", "bfloat16": "ge::DT_BF16", "float32": "ge::DT_FLOAT",
             "int8": "ge::DT_INT8", "int32": "ge::DT_INT32",
             "int64": "ge::DT_INT64"}


def _dt(dtype: str) -> str:
    return GE_DTYPES[dtype].removeprefix("ge::")


def infer_functions(w: Writer, prog: Program, inputs: list[str], outputs: list[str],
                    rt: RuntimeRows | None) -> None:
    """`namespace ge { InferShape; InferDataType }` of a kernel's operator (`inputs`/`outputs` in parameter
    order, `rt` the program's run-time rows or None)."""
    lead_in = next((p for p in inputs if rt is not None and p in rt.tensors), None)
    free = rt.dims if rt is not None and lead_in is not None else 0
    with w.block("namespace ge", "}  // namespace ge"):
        if free:
            scaled = [p for p in (*inputs, *outputs) if p in rt.tensors]  # type: ignore[union-attr]
            w(f"// Output shapes from the input shapes: the first {free} dimension(s) of {', '.join(scaled)} are "
              f"the run's rows (those of {lead_in}); every other dimension is fixed as lowered.")
        else:
            w("// Output shapes from the input shapes: the operator was lowered for these shapes only.")
        with w.block("static graphStatus InferShape(gert::InferShapeContext* context)"):
            lead = f"{camel(lead_in)}Shape" if free else ""
            for i, p in enumerate(inputs):
                shape, name = prog.tensor(p).shape, f"{camel(p)}Shape"
                scaled = free and p in rt.tensors  # type: ignore[operator]
                w(f"const gert::Shape* {name} = context->GetInputShape({i});")
                cond = [f"{name} == nullptr", f"{name}->GetDimNum() != {len(shape)}"]
                cond += [f"{name}->GetDim({d}) != {shape[d]}" for d in range(free if scaled else 0, len(shape))]
                if scaled:
                    cond += [f"({name}->GetDim({d}) < 1 && {name}->GetDim({d}) != -1)" for d in range(free)]
                    if name != lead:
                        cond += [f"{name}->GetDim({d}) != {lead}->GetDim({d})" for d in range(free)]
                with w.block(f"if ({' || '.join(cond)})"):
                    w("return GRAPH_FAILED;")
            for i, p in enumerate(outputs):
                shape, name = prog.tensor(p).shape, f"{camel(p)}OutShape"
                scaled = free and p in rt.tensors  # type: ignore[operator]
                w(f"gert::Shape* {name} = context->GetOutputShape({i});")
                with w.block(f"if ({name} == nullptr)"):
                    w("return GRAPH_FAILED;")
                w(f"{name}->SetDimNum({len(shape)});")
                for d, n in enumerate(shape):
                    w(f"{name}->SetDim({d}, {f'{lead}->GetDim({d})' if scaled and d < free else n});")
            w("return GRAPH_SUCCESS;")
        w("", "// Output data types: the program's, for the input data types it was lowered for.")
        with w.block("static graphStatus InferDataType(gert::InferDataTypeContext* context)"):
            if inputs:
                cond = " || ".join(f"context->GetInputDataType({i}) != {_dt(prog.tensor(p).dtype)}"
                                   for i, p in enumerate(inputs))
                with w.block(f"if ({cond})"):
                    w("return GRAPH_FAILED;")
            for i, p in enumerate(outputs):
                with w.block(f"if (context->SetOutputDataType({i}, {_dt(prog.tensor(p).dtype)}) != GRAPH_SUCCESS)"):
                    w("return GRAPH_FAILED;")
            w("return GRAPH_SUCCESS;")


def infer_registration() -> str:
    """The OpDef constructor's line that registers the two functions (graph mode needs both)."""
    return f"this->SetInferShape({INFER_SHAPE}).SetInferDataType({INFER_DTYPE});"
