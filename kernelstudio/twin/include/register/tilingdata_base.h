// Tiling-data macros: BEGIN_TILING_DATA_DEF ... END_TILING_DATA_DEF build a plain struct with
// set_/get_ accessors; REGISTER_TILING_DATA_CLASS names the struct GET_TILING_DATA loads.
#ifndef KS_TWIN_TILINGDATA_BASE_H
#define KS_TWIN_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace optiling {}

#define BEGIN_TILING_DATA_DEF(class_name) struct class_name {
#define TILING_DATA_FIELD_DEF(data_type, field_name)                     \
    data_type field_name = data_type();                                  \
    void set_##field_name(data_type v) { field_name = v; }               \
    data_type get_##field_name() const { return field_name; }
#define TILING_DATA_FIELD_DEF_ARR(data_type, arr_size, field_name)       \
    data_type field_name[arr_size] = {};                                 \
    void set_##field_name(const data_type* v) { std::memcpy(field_name, v, sizeof(field_name)); } \
    const data_type* get_##field_name() const { return field_name; }
#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) struct_type field_name;
#define END_TILING_DATA_DEF                                                                           \
    size_t GetDataSize() const { return sizeof(*this); }                                              \
    void SaveToBuffer(void* buf, size_t cap) const { std::memcpy(buf, this, cap < sizeof(*this) ? cap : sizeof(*this)); } \
    }

// One registered tiling struct per translation unit; GET_TILING_DATA_WITH_STRUCT picks one by name.
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) using KsTwinTilingData = class_name;

namespace ks_twin {
template <class T> inline T load_tiling(const void* src)
{
    T t;
    std::memcpy(static_cast<void*>(&t), src, sizeof(T));
    return t;
}
}  // namespace ks_twin

#define GET_TILING_DATA(var, tiling_arg)                                                   \
    auto var = [&]() {                                                                     \
        using namespace ::optiling;                                                        \
        return ::ks_twin::load_tiling<KsTwinTilingData>(tiling_arg); /* needs REGISTER_TILING_DATA_CLASS */ \
    }()
#define GET_TILING_DATA_WITH_STRUCT(struct_name, var, tiling_arg) \
    auto var = ::ks_twin::load_tiling<struct_name>(tiling_arg)

#endif
