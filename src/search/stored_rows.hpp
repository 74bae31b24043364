#pragma once
// The stage-2 map kernel's view of one stored document's token vectors: the
// token store's codes as they are on disk, no copy (verify/bf16_maps.hpp).
#include <cstdint>

#include "index/token_store.hpp"
#include "verify/bf16_maps.hpp"

namespace verity::search {

inline verify::TokenRows stored_rows(const index::TokenStore& store, uint64_t doc) {
  const auto raw = store.raw(doc);
  const auto codes = store.precision() == index::TokenPrecision::fp32   ? verify::RowCodes::f32
                     : store.precision() == index::TokenPrecision::fp16 ? verify::RowCodes::f16
                                                                        : verify::RowCodes::i8;
  return {codes, raw.codes, raw.scales, raw.n};
}

}  // namespace verity::search
