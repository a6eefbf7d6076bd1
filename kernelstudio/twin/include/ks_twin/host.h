// The CPU launcher's host step: run an operator's TilingFunc (op_host/<op>.cpp, registered by OP_ADD)
// on the input shapes, as the CANN runtime does before each launch, and hand main.cpp the block dim,
// tiling key, tiling blob and workspace size it produced.
#ifndef KS_TWIN_HOST_H
#define KS_TWIN_HOST_H

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../register/op_def_registry.h"
#include "error.h"
#include "runtime.h"

namespace ks_twin::host {

struct Launch {
    uint32_t block_dim = 0;
    uint64_t tiling_key = 0;
    std::vector<uint8_t> tiling;  // the TilingFunc's blob, GetDataSize() bytes
    size_t workspace_bytes = 0;   // workspace size 0 (system + user)
};

inline std::string ks_shape_text(const std::vector<std::vector<int64_t>>& shapes)
{
    std::string s;
    for (const auto& shape : shapes) {
        s += s.empty() ? "[" : ", [";
        for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
        s += "]";
    }
    return s;
}

[[noreturn]] inline void no_tiling(const char* op_type)
{
    fail("launch", "operator %s has no TilingFunc: its op_host/*.cpp must define OpDef %s with "
         "AICore().SetTiling(...) and OP_ADD(%s), and be built with the kernels", op_type, op_type, op_type);
}

// The registry entry of `op_type` (an operator no op_host source registered has no TilingFunc either).
inline std::map<std::string, OpEntry>::iterator registered(const char* op_type)
{
    auto it = registry().find(op_type);
    if (it == registry().end()) no_tiling(op_type);
    return it;
}

// Runs the TilingFunc of `op_type` for these input and output shapes on `platform`. `storage` gives, per input,
// the storage shape of an input the OpDef declares in a private format (NC1HWC0: [N, C1, H, W, C0];
// FRACTAL_Z: [C1 * kh * kw, N1, 16, C0]), as the graph engine's TransData leaves it; an empty entry (or no
// `storage`) means the storage shape is the origin shape. KS_TWIN_TILING_DUMP=<dir> writes the blob to
// <dir>/<op_type>.tiling.bin.
inline Launch run_tiling(const char* op_type, const std::vector<std::vector<int64_t>>& inputs,
                         const std::vector<std::vector<int64_t>>& outputs, const fe::PlatFormInfos& platform,
                         const std::vector<std::vector<int64_t>>& storage = {})
{
    auto it = registered(op_type);
    if (it->second.tiling == nullptr) no_tiling(op_type);
    if (!storage.empty() && storage.size() != inputs.size()) {
        fail("launch", "run_tiling(%s): %zu storage shapes for %zu inputs; give one per input ({} where the "
             "storage shape is the origin shape)", op_type, storage.size(), inputs.size());
    }
    std::vector<gert::StorageShape> in, out;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const bool own = i < storage.size() && !storage[i].empty();
        in.emplace_back(gert::Shape(inputs[i]), gert::Shape(own ? storage[i] : inputs[i]));
    }
    for (const auto& s : outputs) out.emplace_back(gert::Shape(s));
    gert::TilingContext ctx(in, out, platform, 64 * 1024);
    KS_TWIN_LOG("TilingFunc", "op=%s", op_type);
    if (it->second.tiling(&ctx) != ge::GRAPH_SUCCESS) {
        fail("tiling", "the TilingFunc of %s returned GRAPH_FAILED for input shapes %s; the kernel was generated "
             "for other shapes, or its tiling does not fit the chip", op_type, ks_shape_text(inputs).c_str());
    }
    Launch l;
    l.block_dim = ctx.GetBlockDim();
    l.tiling_key = ctx.GetTilingKey();
    const size_t n = ctx.GetRawTilingData()->GetDataSize();
    if (l.block_dim == 0 || n == 0) {
        fail("tiling", "the TilingFunc of %s set block dim %u and %zu bytes of tiling data; it must call "
             "context->SetBlockDim(n > 0) and GetRawTilingData()->SetDataSize(tiling.GetDataSize())", op_type,
             l.block_dim, n);
    }
    const uint8_t* data = static_cast<const uint8_t*>(ctx.GetRawTilingData()->GetData());
    l.tiling.assign(data, data + n);
    l.workspace_bytes = ctx.Workspaces().empty() ? 0 : ctx.Workspaces()[0];
    LaunchState& ls = launch_state();  // the launch that follows runs on this chip with this workspace
    ls.tiled = true;
    ls.aic_cores = platform.aicNum;
    ls.aiv_cores = platform.aivNum;
    ls.workspace_bytes = l.workspace_bytes;
    if (const char* dir = std::getenv("KS_TWIN_TILING_DUMP")) {
        std::string path = std::string(dir) + "/" + op_type + ".tiling.bin";
        if (FILE* f = std::fopen(path.c_str(), "wb")) {
            std::fwrite(l.tiling.data(), 1, l.tiling.size(), f);
            std::fclose(f);
        }
    }
    return l;
}

// Runs the InferShape function `op_type` registered (OpDef::SetInferShape) on these input shapes, as the graph
// engine does when it builds a graph, and puts the `outputs` shapes it set into `shapes`. Returns the
// function's status (GRAPH_FAILED for inputs the operator does not take).
inline ge::graphStatus infer_shape(const char* op_type, const std::vector<std::vector<int64_t>>& inputs,
                                   size_t outputs, std::vector<std::vector<int64_t>>& shapes)
{
    auto it = registered(op_type);
    if (it->second.infer_shape == nullptr) {
        fail("launch", "operator %s has no InferShape: graph mode needs one; its OpDef must call "
             "SetInferShape(...)", op_type);
    }
    std::vector<gert::Shape> in;
    for (const auto& s : inputs) in.emplace_back(s);
    gert::InferShapeContext ctx(in, outputs);
    const ge::graphStatus status = it->second.infer_shape(&ctx);
    shapes.clear();
    for (size_t i = 0; i < outputs; ++i) shapes.push_back(ctx.GetOutputShape(i)->Dims());
    return status;
}

// Runs the InferDataType function `op_type` registered (OpDef::SetInferDataType) on these input data types and
// puts the `outputs` data types it set into `types`. Returns the function's status.
inline ge::graphStatus infer_data_type(const char* op_type, const std::vector<ge::DataType>& inputs, size_t outputs,
                                       std::vector<ge::DataType>& types)
{
    auto it = registered(op_type);
    if (it->second.infer_dtype == nullptr) {
        fail("launch", "operator %s has no InferDataType: graph mode needs one; its OpDef must call "
             "SetInferDataType(...)", op_type);
    }
    gert::InferDataTypeContext ctx(inputs, outputs);
    const ge::graphStatus status = it->second.infer_dtype(&ctx);
    types.clear();
    for (size_t i = 0; i < outputs; ++i) types.push_back(ctx.GetOutputDataType(i));
    return status;
}

// What the launcher checks before a launch, as a graph build would: the operator's InferShape and
// InferDataType accept these inputs and give the output shapes and data types the launcher allocated.
inline void check_inference(const char* op_type, const std::vector<std::vector<int64_t>>& inputs,
                            const std::vector<std::vector<int64_t>>& outputs, const std::vector<ge::DataType>& in_types,
                            const std::vector<ge::DataType>& out_types)
{
    std::vector<std::vector<int64_t>> shapes;
    if (infer_shape(op_type, inputs, outputs.size(), shapes) != ge::GRAPH_SUCCESS) {
        fail("infer", "the InferShape of %s returned GRAPH_FAILED for input shapes %s", op_type,
             ks_shape_text(inputs).c_str());
    }
    if (shapes != outputs) {
        fail("infer", "the InferShape of %s gives output shapes %s for input shapes %s; the launch uses %s", op_type,
             ks_shape_text(shapes).c_str(), ks_shape_text(inputs).c_str(), ks_shape_text(outputs).c_str());
    }
    std::vector<ge::DataType> types;
    if (infer_data_type(op_type, in_types, out_types.size(), types) != ge::GRAPH_SUCCESS) {
        fail("infer", "the InferDataType of %s returned GRAPH_FAILED for its input data types", op_type);
    }
    for (size_t i = 0; i < types.size(); ++i) {
        if (types[i] != out_types[i]) {
            fail("infer", "the InferDataType of %s gives output %zu data type %d; the launch uses %d", op_type, i,
                 static_cast<int>(types[i]), static_cast<int>(out_types[i]));
        }
    }
}

// The row dimensions of a kernel that takes its row count at run time: `path` (written by ks.twin.run next to
// the inputs) holds one whole number per dimension; without the file, the dimensions it was lowered for.
inline std::vector<int64_t> runtime_dims(const char* path, const std::vector<int64_t>& lowered)
{
    FILE* f = std::fopen(path, "r");
    if (f == nullptr) return lowered;
    std::vector<int64_t> dims;
    long long v = 0;
    while (std::fscanf(f, "%lld", &v) == 1) dims.push_back(static_cast<int64_t>(v));
    std::fclose(f);
    if (dims.size() != lowered.size()) {
        fail("launch", "%s holds %zu row dimension(s); the kernel takes %zu (its first dimensions, as lowered: %s)",
             path, dims.size(), lowered.size(), ks_shape_text({lowered}).c_str());
    }
    for (int64_t d : dims) {
        if (d < 1) fail("launch", "%s: row dimension %lld; each must be at least 1", path, static_cast<long long>(d));
    }
    return dims;
}

}  // namespace ks_twin::host

#endif
