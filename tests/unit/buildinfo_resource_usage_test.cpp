#include "buildinfo/resource_usage.hpp"

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"

#include <doctest/doctest.h>
#include <filesystem>

using kopt::test::fixture;
namespace bi = kopt::buildinfo;

TEST_SUITE_BEGIN("buildinfo::resource_usage");

TEST_CASE("ptxas -v of three real blockscale instances: registers, spills, stack, barriers") {
  auto path = fixture("resource_usage/ptxas_v_sm90a.txt");
  auto kernels = bi::parse_ptxas_verbose(kopt::util::read_file(path), path.string());
  REQUIRE(kernels.size() == 3);
  CHECK(kernels[0].kernel == "_ZN4a8w820gemm_a8w8_blockscaleILi16ELi32ELi1ELi2ELi4EEEvNS_6ParamsE");
  CHECK(kernels[0].arch == "sm_90a");
  CHECK(kernels[0].registers == 80);
  CHECK(kernels[0].spill_store_bytes == 0);
  CHECK(kernels[0].barriers == 1);
  CHECK(kernels[0].max_warps_by_registers() == 25);
  // 64x128 with 2x2 warps runs out of registers: 255 and spills.
  CHECK(kernels[1].registers == 255);
  CHECK(kernels[1].stack_bytes == 48);
  CHECK(kernels[1].spill_store_bytes == 52);
  CHECK(kernels[1].spill_load_bytes == 48);
  CHECK(kernels[1].max_warps_by_registers() == 8);
  CHECK(kernels[2].registers == 255);
  CHECK(kernels[2].spill_store_bytes == 0);
  CHECK(bi::demangle(kernels[0].kernel) ==
        "void a8w8::gemm_a8w8_blockscale<16, 32, 1, 2, 4>(a8w8::Params)");
}

TEST_CASE("ptxas output cut before the registers line is an error naming the kernel") {
  CHECK_THROWS_WITH(bi::parse_ptxas_verbose("ptxas info    : Compiling entry function '_Z1fv' "
                                            "for 'sm_90a'\n",
                                            "cut.txt"),
                    "cut.txt: kernel _Z1fv: no 'Used N registers' line (is this complete "
                    "-Xptxas -v output?)");
}

TEST_CASE("cuobjdump --dump-resource-usage of a real harness binary") {
  auto path = fixture("resource_usage/cuobjdump_sm90a.txt");
  auto kernels = bi::parse_cuobjdump_resource_usage(kopt::util::read_file(path), path.string());
  REQUIRE(kernels.size() >= 14);
  bool spilling = false;
  for (const auto &k : kernels) {
    CHECK(k.arch == "sm_90a");
    CHECK(k.registers > 0);
    CHECK(k.stack_bytes >= 0);
    if (k.kernel == "_ZN4a8w820gemm_a8w8_blockscaleILi64ELi128ELi2ELi2ELi3EEEvNS_6ParamsE") {
      spilling = true;
      CHECK(k.registers == 255);
      CHECK(k.stack_bytes == 48);
    }
  }
  CHECK(spilling);
}

TEST_CASE("cuobjdump: a Function line without its fields names the line") {
  CHECK_THROWS_WITH(bi::parse_cuobjdump_resource_usage(
                        "arch = sm_90a\nResource usage:\n Function _Z1fv:\n  garbage\n", "c.txt"),
                    "c.txt:4: REG: expected 'REG:<n> STACK:<n> SHARED:<n> ...' after Function "
                    "_Z1fv, got '  garbage'");
}

TEST_CASE("hipcc and llc kernel-resource-usage remarks (documented layout, gfx90a)") {
  auto path = fixture("resource_usage/amdgpu_remarks_doc.txt");
  auto kernels = bi::parse_amdgpu_resource_remarks(kopt::util::read_file(path), path.string());
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].kernel == "_Z4gemmPKfS0_Pfi");
  CHECK(kernels[0].sgprs == 28);
  CHECK(kernels[0].registers == 9);
  CHECK(kernels[0].occupancy_waves == 5);
  CHECK(kernels[0].shared_bytes == 0);
  CHECK(kernels[1].kernel == "test_kernel");
  CHECK(kernels[1].stack_bytes == 16);
  CHECK(kernels[1].spill_store_bytes == 2);
  CHECK(kernels[1].shared_bytes == 4096);
}

TEST_SUITE_END();

TEST_SUITE_BEGIN("buildinfo::resource_usage");

TEST_CASE("real hipcc 5.2 remarks for a gfx90a instance of the HIP example") {
  // Captured here: Debian's hipcc 5.2 compiling instance 128x16x64x256 of
  // examples/hip_gemm_a8w8_blockscale with -Rpass-analysis=kernel-resource-usage; the caret
  // lines clang prints between remarks must not confuse the parser.
  auto path = fixture("resource_usage/hipcc52_gfx90a_remarks.txt");
  auto kernels = bi::parse_amdgpu_resource_remarks(kopt::util::read_file(path), path.string());
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].kernel ==
        "_ZN4a8w827gemm_a8w8_blockscale_kernelILi128ELi16ELi64ELi256ELi1ELi8EEEv8GemmArgs");
  CHECK(kernels[0].sgprs == 48);
  CHECK(kernels[0].registers == 56);
  CHECK(kernels[0].occupancy_waves == 6);
  CHECK(kernels[0].stack_bytes == 0);
  CHECK(kernels[0].spill_store_bytes == 0);
  CHECK(kernels[0].shared_bytes == 21824);
}

TEST_SUITE_END();
