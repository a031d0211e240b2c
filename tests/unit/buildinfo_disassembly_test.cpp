#include "buildinfo/disassembly.hpp"

#include <doctest/doctest.h>

namespace bi = kopt::buildinfo;

namespace {

// `objdump -d -r -w --no-show-raw-insn` of a harness object compiled with the baseline's
// headers: check_output calls the library's compare, tolerance reads a constant, main calls
// a local function of the same section (no relocation) and jumps to a cold part.
const char *baseline = R"(
harness.o:     file format elf64-x86-64


Disassembly of section .text:

0000000000000000 <_ZN1P12check_outputEv>:
       0:	push   %r14
      1a:	call   1f <_ZN1P12check_outputEv+0x1f>	1b: R_X86_64_PLT32	_ZN4kopt7harness7compareERKSt6vectorIfSaIfEES5_NS0_9ToleranceE-0x4
      1f:	ret

0000000000000020 <_ZNK1P9toleranceEv>:
      20:	pxor   %xmm0,%xmm0
      24:	movsd  0x0(%rip),%xmm1        # 2c <_ZNK1P9toleranceEv+0xc>	28: R_X86_64_PC32	.LC1-0x4
      2c:	ret

0000000000000040 <main>:
      40:	call   20 <_ZNK1P9toleranceEv>
      45:	jmp    4a <main+0xa>	46: R_X86_64_PC32	.text.unlikely+0x13d
      4a:	ret
)";

} // namespace

TEST_SUITE_BEGIN("buildinfo::disassembly");

TEST_CASE("the same code compiled beside other code reads the same") {
  // Other addresses, another constant label, another offset into the cold section and padding
  // to the next function; the relocations on lines of their own (objdump without -w).
  const char *moved = R"(
Disassembly of section .text:

0000000000000100 <_ZNK1P9toleranceEv>:
     100:	pxor   %xmm0,%xmm0
     104:	movsd  0x0(%rip),%xmm1        # 10c <_ZNK1P9toleranceEv+0xc>
			108: R_X86_64_PC32	.LC7-0x4
     10c:	ret
     10d:	data16 cs nopw 0x0(%rax,%rax,1)
     118:	xchg   %ax,%ax

0000000000000200 <main>:
     200:	call   100 <_ZNK1P9toleranceEv>
     205:	jmp    20a <main+0xa>
			206: R_X86_64_PC32	.text.unlikely+0x140
     20a:	ret

0000000000000300 <_ZN1P12check_outputEv>:
     300:	push   %r14
     31a:	call   31f <main+0x11f>
			31b: R_X86_64_PLT32	_ZN4kopt7harness7compareERKSt6vectorIfSaIfEES5_NS0_9ToleranceE-0x4
     31f:	ret

0000000000000400 <_ZN10gemm_shape4lazyEv>:
     400:	ret
)";
  bi::Functions base = bi::parse_objdump(baseline);
  REQUIRE(base.size() == 3);
  CHECK(base.at("_ZN1P12check_outputEv").size() == 3);
  CHECK(bi::callees(base.at("main")) == std::vector<std::string>{"_ZNK1P9toleranceEv"});
  // A function only the candidate's compile has (its own) is no change.
  CHECK(bi::code_changes(base, bi::parse_objdump(moved)).empty());
}

TEST_CASE("a call bound elsewhere, an inlined body and a missing function are changes") {
  const char *candidate = R"(
0000000000000000 <_ZN1P12check_outputEv>:
       0:	push   %r14
      1a:	call   1f <_ZN1P12check_outputEv+0x1f>	1b: R_X86_64_PLT32	_ZN4kopt7harness7compareIfEENS0_10ComparisonERSt6vectorIT_SaIS4_EES7_NS0_9ToleranceE-0x4
      1f:	ret

0000000000000020 <_ZNK1P9toleranceEv>:
      20:	pxor   %xmm0,%xmm0
      24:	movsd  0x0(%rip),%xmm1        # 2c <_ZNK1P9toleranceEv+0xc>	28: R_X86_64_PC32	.LC1-0x4
      28:	mulsd  %xmm1,%xmm0
      2c:	ret
)";
  std::vector<bi::CodeChange> changes =
      bi::code_changes(bi::parse_objdump(baseline), bi::parse_objdump(candidate));
  REQUIRE(changes.size() == 3);
  CHECK(changes[0].function == "_ZN1P12check_outputEv");
  CHECK(bi::describe(changes[0]) ==
        "refers to kopt::harness::Comparison kopt::harness::compare<float>(std::vector<float, "
        "std::allocator<float> >&, std::vector<float, std::allocator<float> >&, "
        "kopt::harness::Tolerance) instead of kopt::harness::compare(std::vector<float, "
        "std::allocator<float> > const&, std::vector<float, std::allocator<float> > const&, "
        "kopt::harness::Tolerance)");
  CHECK(changes[1].function == "_ZNK1P9toleranceEv");
  CHECK(bi::describe(changes[1]) == "compiles to other instructions");
  CHECK(changes[2].function == "main");
  CHECK(bi::describe(changes[2]) == "is not compiled");
}

TEST_CASE("a call the candidate's inlined code no longer makes is named") {
  const char *inlined = R"(
0000000000000000 <_ZN1P12check_outputEv>:
       0:	push   %r14
       2:	xor    %eax,%eax
      1f:	ret
)";
  bi::Functions base = bi::parse_objdump(baseline);
  bi::Functions cand = bi::parse_objdump(inlined);
  cand["_ZNK1P9toleranceEv"] = base.at("_ZNK1P9toleranceEv");
  cand["main"] = base.at("main");
  std::vector<bi::CodeChange> changes = bi::code_changes(base, cand);
  REQUIRE(changes.size() == 1);
  CHECK(bi::describe(changes[0]) ==
        "no longer refers to kopt::harness::compare(std::vector<float, std::allocator<float> > "
        "const&, std::vector<float, std::allocator<float> > const&, kopt::harness::Tolerance)");
}

TEST_SUITE_END();
