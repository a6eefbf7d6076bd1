// Host operator registration of the kernelstudio twin: the ge/gert types a TilingFunc, an InferShape and an
// InferDataType function see, ops::OpDef with OP_ADD, and a registry the CPU launcher uses to run each
// operator's functions (ks_twin/host.h).
//
// On CANN the operator package registers OpDef classes; the graph engine calls the functions given to
// SetInferShape / SetInferDataType (gert::InferShapeContext, gert::InferDataTypeContext) when it builds a
// graph, and the runtime calls the TilingFunc given to AICore().SetTiling with a gert::TilingContext before
// each launch; the twin does the same in-process.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "register/op_def_registry.h is a host header (OpDef and TilingContext): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
// A kernel unit reads its op_host/<op>_tiling.h for the struct a CANN build generates from it: of this
// header it gets only what that struct needs.
#elif !defined(KS_TWIN_OP_DEF_REGISTRY_H)
#define KS_TWIN_OP_DEF_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../tiling/platform/platform_ascendc.h"

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
enum DataType {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_INT64 = 9, DT_BF16 = 27,
    DT_UNDEFINED = 28
};
enum Format { FORMAT_NCHW = 0, FORMAT_NHWC = 1, FORMAT_ND = 2, FORMAT_NC1HWC0 = 3, FORMAT_FRACTAL_Z = 4,
             FORMAT_FRACTAL_NZ = 29 };  // 29: aclFormat ACL_FORMAT_FRACTAL_NZ in CANN's TransData docs
}  // namespace ge

namespace gert {

class Shape {
public:
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return n;
    }
    void AppendDim(int64_t d) { dims_.push_back(d); }
    void SetDimNum(size_t n) { dims_.resize(n, 0); }
    void SetDim(size_t i, int64_t d)
    {
        if (i < dims_.size()) dims_[i] = d;
    }
    const std::vector<int64_t>& Dims() const { return dims_; }  // twin only: the dimensions as a vector
    bool operator==(const Shape& o) const { return dims_ == o.dims_; }
    bool operator!=(const Shape& o) const { return dims_ != o.dims_; }

private:
    std::vector<int64_t> dims_;
};

class StorageShape {
public:
    StorageShape() = default;
    explicit StorageShape(Shape s) : origin_(s), storage_(std::move(s)) {}
    StorageShape(Shape origin, Shape storage) : origin_(std::move(origin)), storage_(std::move(storage)) {}
    const Shape& GetOriginShape() const { return origin_; }
    const Shape& GetStorageShape() const { return storage_; }

private:
    Shape origin_, storage_;
};

// The raw tiling buffer a TilingFunc fills (SaveToBuffer) and sizes (SetDataSize).
class TilingData {
public:
    explicit TilingData(size_t capacity) : buf_(capacity, 0) {}
    void* GetData() { return buf_.data(); }
    size_t GetCapacity() const { return buf_.size(); }
    void SetDataSize(size_t n) { size_ = n; }
    size_t GetDataSize() const { return size_; }

private:
    std::vector<uint8_t> buf_;
    size_t size_ = 0;
};

class TilingContext {
public:
    TilingContext(std::vector<StorageShape> inputs, std::vector<StorageShape> outputs, const fe::PlatFormInfos& platform,
                  size_t tilingCapacity)
        : inputs_(std::move(inputs)), outputs_(std::move(outputs)), platform_(platform), tiling_(tilingCapacity)
    {
    }
    size_t GetInputNum() const { return inputs_.size(); }
    const StorageShape* GetInputShape(size_t i) const { return i < inputs_.size() ? &inputs_[i] : nullptr; }
    const StorageShape* GetOutputShape(size_t i) const { return i < outputs_.size() ? &outputs_[i] : nullptr; }
    fe::PlatFormInfos* GetPlatformInfo() { return &platform_; }
    uint32_t SetBlockDim(uint32_t dim)
    {
        blockDim_ = dim;
        return 0;
    }
    uint32_t GetBlockDim() const { return blockDim_; }
    uint32_t SetTilingKey(uint64_t key)
    {
        tilingKey_ = key;
        return 0;
    }
    uint64_t GetTilingKey() const { return tilingKey_; }
    TilingData* GetRawTilingData() { return &tiling_; }
    size_t* GetWorkspaceSizes(size_t n)
    {
        if (workspaces_.size() < n) workspaces_.resize(n, 0);
        return workspaces_.data();
    }
    const std::vector<size_t>& Workspaces() const { return workspaces_; }

private:
    std::vector<StorageShape> inputs_, outputs_;
    fe::PlatFormInfos platform_;
    uint32_t blockDim_ = 0;
    uint64_t tilingKey_ = 0;
    TilingData tiling_;
    std::vector<size_t> workspaces_;
};

// What a graph engine's shape inference hands the operator: its input shapes (origin shapes) and one output
// shape per output for the function to set.
class InferShapeContext {
public:
    InferShapeContext(std::vector<Shape> inputs, size_t outputs) : inputs_(std::move(inputs)), outputs_(outputs) {}
    size_t GetComputeNodeInputNum() const { return inputs_.size(); }
    const Shape* GetInputShape(size_t i) const { return i < inputs_.size() ? &inputs_[i] : nullptr; }
    const Shape* GetRequiredInputShape(size_t i) const { return GetInputShape(i); }
    Shape* GetOutputShape(size_t i) { return i < outputs_.size() ? &outputs_[i] : nullptr; }
    size_t GetComputeNodeOutputNum() const { return outputs_.size(); }

private:
    std::vector<Shape> inputs_;
    std::vector<Shape> outputs_;
};

// What a graph engine's data type inference hands the operator: its input data types, and one output data
// type per output for the function to set (DT_UNDEFINED until set).
class InferDataTypeContext {
public:
    InferDataTypeContext(std::vector<ge::DataType> inputs, size_t outputs)
        : inputs_(std::move(inputs)), outputs_(outputs, ge::DT_UNDEFINED)
    {
    }
    ge::DataType GetInputDataType(size_t i) const { return i < inputs_.size() ? inputs_[i] : ge::DT_UNDEFINED; }
    ge::DataType GetRequiredInputDataType(size_t i) const { return GetInputDataType(i); }
    ge::DataType GetOutputDataType(size_t i) const { return i < outputs_.size() ? outputs_[i] : ge::DT_UNDEFINED; }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType dt)
    {
        if (i >= outputs_.size()) return ge::GRAPH_FAILED;
        outputs_[i] = dt;
        return ge::GRAPH_SUCCESS;
    }
    size_t GetComputeNodeOutputNum() const { return outputs_.size(); }

private:
    std::vector<ge::DataType> inputs_;
    std::vector<ge::DataType> outputs_;
};

}  // namespace gert

namespace ks_twin::host {
using TilingFunc = ge::graphStatus (*)(gert::TilingContext*);
using InferShapeFunc = ge::graphStatus (*)(gert::InferShapeContext*);
using InferDataTypeFunc = ge::graphStatus (*)(gert::InferDataTypeContext*);
struct OpEntry {
    TilingFunc tiling = nullptr;
    InferShapeFunc infer_shape = nullptr;
    InferDataTypeFunc infer_dtype = nullptr;
    std::vector<std::string> inputs, outputs, configs;
};
// Operators registered by OP_ADD in any translation unit (one registry per program).
inline std::map<std::string, OpEntry>& registry()
{
    static std::map<std::string, OpEntry> ops;
    return ops;
}
}  // namespace ks_twin::host

namespace ops {

enum Option { REQUIRED = 0, OPTIONAL = 1, DYNAMIC = 2 };

class OpParamDef {
public:
    OpParamDef& ParamType(Option) { return *this; }
    OpParamDef& DataType(std::vector<ge::DataType>) { return *this; }
    OpParamDef& Format(std::vector<ge::Format>) { return *this; }
    OpParamDef& UnknownShapeFormat(std::vector<ge::Format>) { return *this; }
};

class OpAICoreDef {
public:
    explicit OpAICoreDef(ks_twin::host::OpEntry& entry) : entry_(&entry) {}
    OpAICoreDef& SetTiling(ks_twin::host::TilingFunc f)
    {
        entry_->tiling = f;
        return *this;
    }
    OpAICoreDef& AddConfig(const char* soc)
    {
        entry_->configs.emplace_back(soc);
        return *this;
    }

private:
    ks_twin::host::OpEntry* entry_;
};

class OpDef {
public:
    explicit OpDef(const char* type) : type_(type), core_(ks_twin::host::registry()[type_]) {}
    OpParamDef& Input(const char* name)
    {
        ks_twin::host::registry()[type_].inputs.emplace_back(name);
        return param_;
    }
    OpParamDef& Output(const char* name)
    {
        ks_twin::host::registry()[type_].outputs.emplace_back(name);
        return param_;
    }
    OpAICoreDef& AICore() { return core_; }
    OpDef& SetInferShape(ks_twin::host::InferShapeFunc f)
    {
        ks_twin::host::registry()[type_].infer_shape = f;
        return *this;
    }
    OpDef& SetInferDataType(ks_twin::host::InferDataTypeFunc f)
    {
        ks_twin::host::registry()[type_].infer_dtype = f;
        return *this;
    }

private:
    std::string type_;
    OpAICoreDef core_;
    OpParamDef param_;
};

}  // namespace ops

// Registers the operator class at program start, as CANN's operator package loader does.
#define OP_ADD(op_type) static const op_type ks_twin_op_##op_type(#op_type)

#endif
