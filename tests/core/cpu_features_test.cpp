// The kernel path setting (VERITY_KERNEL_ISA): the default is the fastest path the CPU
// runs, a name pins a path, and a path the CPU lacks or an unknown word is refused.
#include "core/cpu_features.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace verity;

namespace {
std::string config_error_of(const char* value) {
  try {
    isa_from_setting(value);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(KernelIsaSetting, DefaultIsTheFastestPathThisCpuRuns) {
  const Isa fastest = isa_supported(Isa::avx512) ? Isa::avx512 : isa_supported(Isa::avx2) ? Isa::avx2 : Isa::portable;
  EXPECT_EQ(isa_from_setting(nullptr), fastest);
  EXPECT_EQ(isa_from_setting(""), fastest);
  EXPECT_EQ(isa_from_setting("auto"), fastest);
}

TEST(KernelIsaSetting, NamesPinAPathTheCpuHasAndRefuseOthers) {
  EXPECT_EQ(isa_from_setting("portable"), Isa::portable);
  for (Isa isa : {Isa::avx2, Isa::avx512}) {
    const std::string name(isa_name(isa));
    if (isa_supported(isa)) {
      EXPECT_EQ(isa_from_setting(name.c_str()), isa);
    } else {
      const auto message = config_error_of(name.c_str());
      EXPECT_NE(message.find("this CPU has no " + name + " path"), std::string::npos) << message;
    }
  }
  for (const char* bad : {"sse9", "AVX2", "avx2 "}) {
    const auto message = config_error_of(bad);
    EXPECT_NE(message.find("VERITY_KERNEL_ISA"), std::string::npos) << bad;
    EXPECT_NE(message.find("expected auto, avx512, avx2 or portable"), std::string::npos) << message;
  }
}
