#include "buildinfo/build_flags.hpp"

#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <fstream>

using kopt::buildinfo::BuildFlags;
using kopt::buildinfo::instance_flags;
using kopt::buildinfo::read_build_flags;
using kopt::buildinfo::record_instance_flags;
using kopt::test::TempDir;

TEST_SUITE_BEGIN("buildinfo::build_flags");

TEST_CASE("an instance's flags are the same for every candidate folder") {
  auto args = [](const std::string &dir) {
    return std::vector<std::string>{"/usr/bin/ccache",
                                    "/usr/bin/c++",
                                    "-I" + dir + "/src",
                                    "-O3",
                                    "-DNDEBUG",
                                    "-std=c++17",
                                    "-MD",
                                    "-MT",
                                    "obj.o",
                                    "-MF",
                                    "/b/obj.o.d",
                                    "-o",
                                    "/b/obj.o",
                                    "-c",
                                    dir + "/instances/k_16.cpp"};
  };
  std::string flags = instance_flags(args("/s/gen/01"), "/s/gen/01");
  CHECK(flags == "/usr/bin/c++ -I<candidate>/src -O3 -DNDEBUG -std=c++17");
  CHECK(instance_flags(args("/s/gen/02"), "/s/gen/02") == flags);
  // A harness or glue TU is no instance: nothing to record.
  CHECK(instance_flags({"/usr/bin/c++", "-O3", "-c", "/s/gen/01/harness.cpp"}, "/s/gen/01") == "");
}

TEST_CASE("a build is what its instances recorded, and names its optimisation") {
  TempDir dir;
  auto gen = dir.path() / "gen" / "01";
  std::filesystem::create_directories(gen / "instances");
  CHECK_FALSE(read_build_flags(gen).known());
  for (const char *name : {"k_16.cpp", "k_32.cpp"}) {
    std::ofstream(gen / "instances" / name) << "// instance\n";
    record_instance_flags({"/usr/bin/c++", "-O2", "-c", (gen / "instances" / name).string()}, gen);
  }
  BuildFlags build = read_build_flags(gen);
  CHECK(build.flags == "/usr/bin/c++ -O2");
  CHECK(build.hash.size() == 12);
  CHECK(build.optimisation() == "-O2");

  // Rebuilt without -O: another build, and it says so.
  for (const char *name : {"k_16.cpp", "k_32.cpp"}) {
    record_instance_flags({"/usr/bin/c++", "-c", (gen / "instances" / name).string()}, gen);
  }
  BuildFlags plain = read_build_flags(gen);
  CHECK(plain.hash != build.hash);
  CHECK(plain.optimisation() == "-O0 (no -O)");
  CHECK(kopt::buildinfo::build_difference(build, plain) ==
        "build " + build.hash + " (-O2) against build " + plain.hash + " (-O0 (no -O))");

  // Instances compiled apart: both lines, and a record of an instance no longer there is left out.
  record_instance_flags({"/usr/bin/c++", "-O3", "-c", (gen / "instances" / "k_32.cpp").string()},
                        gen);
  std::ofstream(gen / "compiled" / "gone.cpp.flags") << "/usr/bin/c++ -O1\n";
  CHECK(read_build_flags(gen).flags == "/usr/bin/c++ | /usr/bin/c++ -O3");
}

TEST_SUITE_END();
