// Tiling-data macros: BEGIN_TILING_DATA_DEF ... END_TILING_DATA_DEF.
//
// As on CANN there are two views of one struct. The host (TilingFunc, main.cpp) gets a class whose scalar and
// array fields are private behind set_<field>(v) / get_<field>() (a direct `tiling.field = v` does not
// compile there, as on CANN); struct fields (TILING_DATA_FIELD_DEF_STRUCT, e.g. a TCubeTiling) are public
// members with their own accessors. A kernel unit gets the plain struct a CANN build generates: public fields,
// no accessors. Both have the same layout, so the blob SaveToBuffer writes is the struct GET_TILING_DATA reads.
// REGISTER_TILING_DATA_CLASS names the struct GET_TILING_DATA loads.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "register/tilingdata_base.h is a host header (the tiling-data classes of TilingFunc): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#ifndef KS_TWIN_TILINGDATA_BASE_H
#define KS_TWIN_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../securec.h"

namespace optiling {}

#if defined(KS_TWIN_KERNEL_UNIT)
// The kernel's view: a plain struct (CANN generates it from the host definition).
#define BEGIN_TILING_DATA_DEF(class_name) struct class_name {
#define TILING_DATA_FIELD_DEF(data_type, field_name) data_type field_name;
#define TILING_DATA_FIELD_DEF_ARR(data_type, arr_size, field_name) data_type field_name[arr_size];
#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) struct_type field_name;
#define END_TILING_DATA_DEF }
#else
// The host's view: private fields behind set_/get_ (an array's get_ gives its first element, writable).
#define BEGIN_TILING_DATA_DEF(class_name) class class_name { public:
#define TILING_DATA_FIELD_DEF(data_type, field_name)                               \
    public:                                                                        \
    void set_##field_name(data_type v) { field_name = v; }                         \
    data_type get_##field_name() const { return field_name; }                      \
    private:                                                                       \
    data_type field_name = data_type();
#define TILING_DATA_FIELD_DEF_ARR(data_type, arr_size, field_name)                 \
    public:                                                                        \
    void set_##field_name(const data_type* v) { std::memcpy(field_name, v, sizeof(field_name)); } \
    data_type* get_##field_name() { return field_name; }                           \
    private:                                                                       \
    data_type field_name[arr_size] = {};
#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) public: struct_type field_name;
#define END_TILING_DATA_DEF                                                                           \
    public:                                                                                           \
    size_t GetDataSize() const { return sizeof(*this); }                                              \
    void SaveToBuffer(void* buf, size_t cap) const { std::memcpy(buf, static_cast<const void*>(this), cap < sizeof(*this) ? cap : sizeof(*this)); } \
    }
#endif

// One registered tiling struct per translation unit; GET_TILING_DATA_WITH_STRUCT picks one by name.
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) using KsTwinTilingData = class_name;

// GET_TILING_DATA, which reads the registered struct in a kernel, is in kernel_tiling/kernel_tiling.h.

#endif
