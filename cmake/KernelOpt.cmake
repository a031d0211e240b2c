# kopt's CMake API. kopt_add_family() turns a family.json and its candidate folders into
# targets and ctest tests:
#
#   candidate_<id>          the candidate's instances + harness executable
#   candidate_<id>_bench    builds it, runs `kopt bench` -> <state>/results/<id>/measurement.json
#   candidate_<id>_app      with family.json "app": builds the application with BEST's kernels and
#                           with the candidate's (candidate_<id>_application), runs `kopt app`
#   <name>_report           `kopt report` -> <state>/report.html (figures of what is there)
#   ctest: candidate_<id>.correctness (LABELS correctness), candidate_<id>.keep (LABELS keep),
#          candidate_<id>.app (LABELS app, with an application),
#          with fixtures that build, make the golden and measure whatever a test needs.
#
# Reached through find_package(KernelOpt) or add_subdirectory(<kopt source>).
include_guard(GLOBAL)

set(KOPT_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})
find_program(KOPT_CCACHE_PROGRAM ccache)
option(KOPT_USE_CCACHE "Compile candidates through ccache when it is installed" ON)
set(KOPT_CCACHE_BASE_DIR "" CACHE PATH
    "ccache base_dir for candidate compiles (default: the common parent of the source and build trees)")
set(KOPT_CCACHE_REMOTE "" CACHE STRING
    "ccache remote_storage shared by builders, e.g. redis://cache-host:6379 (family CCACHE_REMOTE wins)")
set(KOPT_LAUNCHER "" CACHE STRING
    "command prefix for every harness run (kopt bench/check), e.g. srun;--gres=gpu:1 (family LAUNCHER wins)")

set(KOPT_HIP_ARCHITECTURES "gfx90a;gfx940" CACHE STRING
    "AMD GPU targets of hip families' instance TUs (CMAKE_HIP_ARCHITECTURES wins under the HIP language)")

# Makes `target` of hip family `name` a HIP program, the two ways aiter and Composable Kernel
# trees build HIP: with the HIP language enabled, its sources (the harness, the instance TUs, and
# registry and dispatch, which include the kernel header) are LANGUAGE HIP (HIP_ARCHITECTURES);
# otherwise the C++ compiler must be hipcc (or a HIP-capable clang) and they get
# `-x hip --offload-arch=<arch>...`. roctx ranges are compiled in when roctx is found.
function(_kopt_hip_target name target sources)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("HIP" IN_LIST languages)
    set(archs "${CMAKE_HIP_ARCHITECTURES}")
    if(NOT archs)
      set(archs "${KOPT_HIP_ARCHITECTURES}")
    endif()
    set_source_files_properties(${sources} PROPERTIES LANGUAGE HIP)
    set_target_properties(${target} PROPERTIES HIP_ARCHITECTURES "${archs}" HIP_STANDARD 17
                                               HIP_STANDARD_REQUIRED ON HIP_EXTENSIONS OFF)
  else()
    get_filename_component(compiler "${CMAKE_CXX_COMPILER}" NAME)
    if(NOT compiler MATCHES "hipcc" AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "kopt_add_family(${name}): backend hip needs hipcc as the C++ compiler "
                          "(-DCMAKE_CXX_COMPILER=hipcc) or enable_language(HIP) before "
                          "kopt_add_family; the C++ compiler is ${CMAKE_CXX_COMPILER}")
    endif()
    set(arch_flags "")
    foreach(arch IN LISTS KOPT_HIP_ARCHITECTURES)
      list(APPEND arch_flags --offload-arch=${arch})
    endforeach()
    set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS "-x;hip")
    # hipcc compiles every .cpp as HIP and, without --offload-arch, asks rocm_agent_enumerator
    # for the local GPUs (none on a build machine): every TU and the link name the targets.
    target_compile_options(${target} PRIVATE ${arch_flags})
    target_link_options(${target} PRIVATE ${arch_flags})
    if(NOT compiler MATCHES "hipcc")
      target_link_options(${target} PRIVATE --hip-link)
    endif()
  endif()
  find_path(KOPT_ROCTX_INCLUDE_DIR NAMES rocprofiler-sdk-roctx/roctx.h roctracer/roctx.h
            HINTS /opt/rocm/include)
  find_library(KOPT_ROCTX_LIBRARY NAMES rocprofiler-sdk-roctx roctx64 HINTS /opt/rocm/lib)
  if(KOPT_ROCTX_INCLUDE_DIR AND KOPT_ROCTX_LIBRARY)
    target_include_directories(${target} PRIVATE ${KOPT_ROCTX_INCLUDE_DIR})
    target_link_libraries(${target} PRIVATE ${KOPT_ROCTX_LIBRARY})
    target_compile_definitions(${target} PRIVATE KOPT_HARNESS_ROCTX=1)
  endif()
endfunction()

# The kopt executable, needed at configure time. find_package sets KOPT_EXECUTABLE; under
# add_subdirectory the tool is not built yet, so it is built once here, into the build tree.
function(_kopt_find_executable)
  if(KOPT_EXECUTABLE AND EXISTS "${KOPT_EXECUTABLE}")
    return()
  endif()
  get_filename_component(kopt_root "${KOPT_CMAKE_DIR}/.." ABSOLUTE)
  if(NOT EXISTS "${kopt_root}/src/cli/main.cpp")
    message(FATAL_ERROR "kopt: no kopt executable: set KOPT_EXECUTABLE or use find_package(KernelOpt)")
  endif()
  set(tool_dir "${CMAKE_BINARY_DIR}/_kopt_tool")
  message(STATUS "kopt: building the kopt tool for configure-time generation in ${tool_dir}")
  set(launcher "")
  if(KOPT_CCACHE_PROGRAM)
    set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${KOPT_CCACHE_PROGRAM}")
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S ${kopt_root} -B ${tool_dir} -G Ninja -DKOPT_BUILD_TESTS=OFF
            -DCMAKE_BUILD_TYPE=Release ${launcher}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${tool_dir} --target kopt
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kopt: building the kopt tool failed:\n${out}")
  endif()
  set(KOPT_EXECUTABLE "${tool_dir}/src/kopt" CACHE FILEPATH "the kopt executable" FORCE)
endfunction()

# The deepest folder that holds every path given.
function(_kopt_common_parent out)
  list(POP_FRONT ARGN common)
  foreach(path IN LISTS ARGN)
    # A prefix test, not a regex: paths may hold '+', '.' or other regex characters.
    string(FIND "${path}/" "${common}/" at)
    while(NOT at EQUAL 0 AND NOT common STREQUAL "/")
      get_filename_component(common "${common}" DIRECTORY)
      string(FIND "${path}/" "${common}/" at)
    endwhile()
  endforeach()
  set(${out} "${common}" PARENT_SCOPE)
endfunction()

set(KOPT_COMPILE_JOBS "" CACHE STRING
    "parallel candidate compiles per backend (default: min(cores, free memory / KOPT_COMPILE_MEM_MB))")
set(KOPT_COMPILE_MEM_MB "" CACHE STRING
    "memory one candidate TU compile needs, MiB (default: 512 for host, 2048 for device code)")

# The ninja job pool of a backend's candidate compiles: an nvcc or hipcc TU can take gigabytes,
# so the pool is no larger than free memory allows, and never larger than the cores.
function(_kopt_compile_pool backend out)
  set(pool kopt_compile_${backend})
  get_property(pools GLOBAL PROPERTY JOB_POOLS)
  if(NOT "${pools}" MATCHES "(^|;)${pool}=")
    cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
    cmake_host_system_information(RESULT free_mb QUERY AVAILABLE_PHYSICAL_MEMORY)
    set(per_tu "${KOPT_COMPILE_MEM_MB}")
    if(NOT per_tu)
      set(per_tu 2048)
      if(backend STREQUAL "host")
        set(per_tu 512)
      endif()
    endif()
    math(EXPR size "${free_mb} / ${per_tu}")
    if(size GREATER cores)
      set(size ${cores})
    endif()
    if(size LESS 1)
      set(size 1)
    endif()
    if(KOPT_COMPILE_JOBS)
      set(size ${KOPT_COMPILE_JOBS})
    endif()
    set_property(GLOBAL APPEND PROPERTY JOB_POOLS ${pool}=${size})
    message(STATUS "kopt: job pool ${pool}=${size} (${cores} cores, ${free_mb} MiB free, "
                   "${per_tu} MiB per TU)")
  endif()
  set(${out} ${pool} PARENT_SCOPE)
endfunction()

# Baseline mode of an IMPORTED family (docs/IMPORT.md): "library" links the tree's library
# file, which must exist and define the kopt_instance_ symbols; "compile" compiles 00's
# instances with the tree's flags like any candidate's. Sets <mode_out> and <reason_out>.
function(_kopt_import_mode name imported_file mode_out reason_out)
  set(mode "${KOPT_IMPORTED_BASELINE}")
  set(reason "${KOPT_IMPORTED_BASELINE_REASON}")
  if(NOT mode) # written by an older kopt import
    set(mode compile)
    set(reason "${KOPT_IMPORTED_TARGET} is ${KOPT_IMPORTED_TYPE}, not a library of the kernels")
    if(KOPT_IMPORTED_TYPE MATCHES "^(SHARED|STATIC|MODULE)_LIBRARY$")
      set(mode library)
      set(reason "${KOPT_IMPORTED_TARGET} is ${KOPT_IMPORTED_TYPE}")
    endif()
  endif()
  if(mode STREQUAL "library")
    if(NOT EXISTS "${KOPT_IMPORTED_ARTIFACT}")
      message(FATAL_ERROR "kopt_add_family(${name}): ${KOPT_IMPORTED_ARTIFACT} does not exist: "
                          "build ${KOPT_IMPORTED_TARGET} in ${KOPT_IMPORTED_BUILD_DIR} first")
    endif()
    if(CMAKE_NM)
      set(dynamic "")
      if(NOT KOPT_IMPORTED_TYPE STREQUAL "STATIC_LIBRARY")
        set(dynamic -D)
      endif()
      execute_process(COMMAND ${CMAKE_NM} -g ${dynamic} --defined-only ${KOPT_IMPORTED_ARTIFACT}
                      RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_QUIET)
      if(rc EQUAL 0 AND NOT symbols MATCHES "kopt_instance_")
        set(mode compile)
        string(CONCAT reason "${KOPT_IMPORTED_ARTIFACT} defines no kopt_instance_ symbol, so "
                             "it is no library of the family's kernels: baseline 00 compiles "
                             "its own instances with the tree's flags")
      endif()
    endif()
  elseif(NOT mode STREQUAL "compile")
    message(FATAL_ERROR "kopt_add_family(${name}): ${imported_file}: KOPT_IMPORTED_BASELINE is "
                        "'${mode}', expected library or compile")
  endif()
  set(${mode_out} ${mode} PARENT_SCOPE)
  set(${reason_out} "${reason}" PARENT_SCOPE)
endfunction()

# The body of kopt's folder for an IMPORTED family's instance TUs: one OBJECT library per
# candidate that compiles its instances, linked into candidate_<id>. A macro, because the
# project's CMAKE_<LANG>_FLAGS[_<CONFIG>] are folder variables: they are cleared here, and the
# targets' own standard, architecture, PIC and visibility settings unset, so that the compile
# line is the tree's (the imported fragments hold its -std, -O and architectures) and nothing
# of this project's build type.
macro(_kopt_imported_scope)
  foreach(_kopt_lang C CXX CUDA HIP)
    set(CMAKE_${_kopt_lang}_FLAGS "")
    foreach(_kopt_config Debug Release RelWithDebInfo MinSizeRel ${CMAKE_CONFIGURATION_TYPES}
                         ${CMAKE_BUILD_TYPE})
      string(TOUPPER "${_kopt_config}" _kopt_config)
      set(CMAKE_${_kopt_lang}_FLAGS_${_kopt_config} "")
    endforeach()
  endforeach()
  set_property(DIRECTORY PROPERTY COMPILE_OPTIONS "")
  set_property(DIRECTORY PROPERTY COMPILE_DEFINITIONS "")
  set_property(DIRECTORY PROPERTY INCLUDE_DIRECTORIES "")
  # CMake links every HIP target to hip-lang::device, whose -mllvm pairs, define and include
  # folders the tree's line holds already, in the tree's order: not a second time, first.
  set(CMAKE_HIP_RUNTIME_LIBRARIES_SHARED "")
  set(CMAKE_HIP_RUNTIME_LIBRARIES_STATIC "")
  foreach(_kopt_id IN LISTS import_compiled)
    set(_kopt_target ${p}candidate_${_kopt_id}_instances)
    set(_kopt_sources ${KOPT_${name}_${_kopt_id}_SOURCES})
    list(FILTER _kopt_sources INCLUDE REGEX "/instances/[^/]*$")
    foreach(_kopt_source IN LISTS _kopt_sources)
      # An explicit LANGUAGE adds `-x <lang>`, which the tree's line has not: only where the
      # file's extension would not compile it as the tree's language anyway.
      get_filename_component(_kopt_ext "${_kopt_source}" LAST_EXT)
      string(SUBSTRING "${_kopt_ext}" 1 -1 _kopt_ext)
      if(NOT _kopt_ext IN_LIST CMAKE_${KOPT_IMPORTED_LANGUAGE}_SOURCE_FILE_EXTENSIONS)
        set_source_files_properties(${_kopt_source} PROPERTIES LANGUAGE ${KOPT_IMPORTED_LANGUAGE})
      endif()
    endforeach()
    add_library(${_kopt_target} OBJECT ${_kopt_sources})
    add_dependencies(${_kopt_target} ${p}candidate_${_kopt_id}_sources)
    target_include_directories(${_kopt_target} PRIVATE ${KOPT_${name}_${_kopt_id}_DIR})
    target_link_libraries(${_kopt_target} PRIVATE ${imported})
    foreach(_kopt_lang C CXX CUDA HIP)
      foreach(_kopt_property STANDARD STANDARD_REQUIRED EXTENSIONS VISIBILITY_PRESET)
        set_property(TARGET ${_kopt_target} PROPERTY ${_kopt_lang}_${_kopt_property})
      endforeach()
    endforeach()
    foreach(_kopt_property POSITION_INDEPENDENT_CODE VISIBILITY_INLINES_HIDDEN
                           INTERPROCEDURAL_OPTIMIZATION COMPILE_WARNING_AS_ERROR)
      set_property(TARGET ${_kopt_target} PROPERTY ${_kopt_property})
    endforeach()
    if(KOPT_IMPORTED_LANGUAGE STREQUAL "CUDA")
      set_target_properties(${_kopt_target} PROPERTIES CUDA_ARCHITECTURES OFF
                            CUDA_SEPARABLE_COMPILATION ${KOPT_IMPORTED_SEPARABLE})
    endif()
    if(KOPT_IMPORTED_LANGUAGE STREQUAL "HIP")
      # CMake gives a HIP target a -std of its own unless the one asked for is the compiler's
      # default (CMP0128): asking for that default adds none beside the tree's -std fragment.
      set_target_properties(${_kopt_target} PROPERTIES HIP_ARCHITECTURES OFF
        HIP_STANDARD "${CMAKE_HIP_STANDARD_COMPUTED_DEFAULT}"
        HIP_EXTENSIONS "${CMAKE_HIP_EXTENSIONS_COMPUTED_DEFAULT}")
    endif()
    set_target_properties(${_kopt_target} PROPERTIES JOB_POOL_COMPILE ${pool}
      CXX_COMPILER_LAUNCHER "${launcher_${_kopt_id}}"
      CUDA_COMPILER_LAUNCHER "${launcher_${_kopt_id}}"
      HIP_COMPILER_LAUNCHER "${launcher_${_kopt_id}}")
  endforeach()
endmacro()

# The paths and command prefixes of a family, read from kopt_add_family's parsed arguments (ARG_*)
# and set in the caller: spec, state, state_args (--spec, --state-dir, --ledger), p (the target
# prefix), prefix_args, remote (ccache remote storage), run (how a harness run starts) and
# base_dir (ccache's base_dir).
macro(_kopt_family_settings name)
  get_filename_component(spec "${ARG_SPEC}" ABSOLUTE)
  set(state "${CMAKE_BINARY_DIR}/kopt/${name}")
  if(ARG_STATE_DIR)
    get_filename_component(state "${ARG_STATE_DIR}" ABSOLUTE)
  endif()
  set(state_args --spec ${spec} --state-dir ${state})
  if(ARG_LEDGER)
    get_filename_component(ledger "${ARG_LEDGER}" ABSOLUTE)
    list(APPEND state_args --ledger ${ledger})
  endif()
  set(p "${ARG_PREFIX}")
  set(prefix_args "") # kopt check finds the candidate's targets by their prefixed names
  if(p)
    set(prefix_args --prefix ${p})
  endif()
  set(remote "${KOPT_CCACHE_REMOTE}")
  if(ARG_CCACHE_REMOTE)
    set(remote "${ARG_CCACHE_REMOTE}")
  endif()
  # Runs on another host (srun, a container runner) need the state folder on a shared path.
  set(run ${KOPT_LAUNCHER} ${KOPT_EXECUTABLE})
  if(ARG_LAUNCHER)
    set(run ${ARG_LAUNCHER} ${KOPT_EXECUTABLE})
  endif()
  set(base_dir "${KOPT_CCACHE_BASE_DIR}")
  if(NOT base_dir)
    _kopt_common_parent(base_dir "${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}" "${state}")
  endif()
endmacro()

# <build>/kopt/<name>.family.json: where the family's spec and state are, so that kopt run from
# the build folder (or a folder under it) finds them without --spec and --state-dir.
function(_kopt_register_family name)
  set(fields "")
  foreach(pair "name;${name}" "spec;${spec}" "state_dir;${state}" "ledger;${ledger}"
               "build_dir;${CMAKE_BINARY_DIR}")
    list(GET pair 0 key)
    list(LENGTH pair n)
    set(value "")
    if(n GREATER 1)
      list(GET pair 1 value)
    endif()
    string(REPLACE "\\" "\\\\" value "${value}")
    string(REPLACE "\"" "\\\"" value "${value}")
    list(APPEND fields "  \"${key}\": \"${value}\"")
  endforeach()
  list(JOIN fields ",\n" body)
  # Written as is (file(CONFIGURE) would read `@x@` in a path as a variable), when it changed.
  set(file "${CMAKE_BINARY_DIR}/kopt/${name}.family.json")
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL "{\n${body}\n}\n")
    file(WRITE "${file}" "{\n${body}\n}\n")
  endif()
endfunction()

# Configure time: validates the spec and generates every candidate (bad specs fail here, with
# kopt's message naming the file and field), then reads the generated targets.cmake
# (KOPT_<name>_*). A macro, so that targets.cmake's variables reach kopt_add_family.
macro(_kopt_generate_family name)
  execute_process(
    COMMAND ${KOPT_EXECUTABLE} gen-instances --spec ${spec} --out-root ${state}/gen
            --cmake-out ${state}/targets.cmake
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kopt_add_family(${name}): ${err}${out}")
  endif()
  if(err)
    # kopt's warnings (a folder without candidate.json, a tuned row it drops): shown, not lost.
    string(STRIP "${err}" err)
    message(WARNING "kopt_add_family(${name}):\n${err}")
  endif()
  include(${state}/targets.cmake)
  if(NOT DEFINED KOPT_${name}_CANDIDATES)
    message(FATAL_ERROR "kopt_add_family(${name}): ${spec} names another family")
  endif()
  # A new candidate, or a new file in one, changes what is generated: re-configure then. So does
  # an edit of what shapes the targets: a candidate.json (its base), family.json, the configs,
  # templates, instance overrides, the tuned table and heuristic. A malformed one then fails
  # the configure step, before anything compiles.
  file(GLOB_RECURSE candidate_files CONFIGURE_DEPENDS "${KOPT_${name}_CANDIDATES_DIR}/*")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${spec}
                                                                 ${KOPT_${name}_CONFIGURE_DEPENDS})
endmacro()

# What the family's backend asks of the tests, set in the caller: backend, bench_lock and
# gpu_groups (how benchmarks share the machine).
function(_kopt_backend_settings name)
  set(backend "${KOPT_${name}_BACKEND}")
  # Host benchmarks share the CPU: one at a time. GPU benchmarks get a GPU each instead.
  set(bench_lock RESOURCE_LOCK kopt_bench_host)
  set(gpu_groups "")
  if(backend STREQUAL "cuda")
    if(NOT CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "kopt_add_family(${name}): backend cuda needs enable_language(CUDA) "
                          "(and CMAKE_CUDA_ARCHITECTURES) before kopt_add_family")
    endif()
    find_package(CUDAToolkit REQUIRED)
  endif()
  if(NOT backend STREQUAL "host")
    # One benchmark per GPU: with `ctest --resource-spec-file <kopt resources output>` each
    # GPU test gets a GPU of its own (CTEST_RESOURCE_GROUP_0_GPUS); without one, the gate picks.
    set(bench_lock "")
    set(gpu_groups RESOURCE_GROUPS "gpus:1")
  endif()
  set(backend "${backend}" PARENT_SCOPE)
  set(bench_lock "${bench_lock}" PARENT_SCOPE)
  set(gpu_groups "${gpu_groups}" PARENT_SCOPE)
endfunction()

# With IMPORTED <file>: reads the file from `kopt import` (KOPT_IMPORTED_*) and sets imported
# (the tree's interface target) and import_mode (library or compile), saying which and why.
# A macro, so that the file's variables reach kopt_add_family.
macro(_kopt_read_import name)
  set(imported "")
  set(import_mode "")
  if(ARG_IMPORTED)
    get_filename_component(imported_file "${ARG_IMPORTED}" ABSOLUTE)
    include(${imported_file})
    set(imported ${KOPT_IMPORTED_INTERFACE})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${imported_file})
    _kopt_import_mode(${name} "${imported_file}" import_mode import_reason)
    message(STATUS "kopt_add_family(${name}): IMPORTED ${KOPT_IMPORTED_TARGET} "
                   "(${KOPT_IMPORTED_TYPE}) of ${KOPT_IMPORTED_BUILD_DIR}: baseline mode "
                   "${import_mode}: ${import_reason}")
  endif()
endmacro()

# An IMPORTED family's candidate program `target` (its harness, or its application): links the
# tree's interface, and either the tree's library (the baseline in library mode) or the
# candidate's instance target, compiled with the tree's flags in kopt's folder (the harness's
# call appends `id` to the caller's import_compiled; the application links the same objects).
function(_kopt_link_imported name id target)
  set(harness ${p}candidate_${id})
  target_link_libraries(${target} PRIVATE ${imported})
  if(id STREQUAL baseline AND import_mode STREQUAL "library")
    target_link_libraries(${target} PRIVATE ${KOPT_IMPORTED_ARTIFACT})
  else()
    target_link_libraries(${target} PRIVATE ${harness}_instances)
    if(target STREQUAL harness)
      set(import_compiled ${import_compiled} ${id} PARENT_SCOPE)
      # The instance target lies in another folder: this one generates its sources first.
      add_custom_target(${harness}_sources DEPENDS ${KOPT_${name}_${id}_OUTPUTS})
    endif()
  endif()
  if(KOPT_IMPORTED_SEPARABLE)
    # Relocatable device code (the tree's objects, or ours) needs nvcc's device link.
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION ON
                                               CUDA_RESOLVE_DEVICE_SYMBOLS ON)
  endif()
  if(KOPT_IMPORTED_LANGUAGE STREQUAL "CXX" AND KOPT_IMPORTED_STANDARD GREATER 17)
    # The harness and glue include the kernel header: at least the tree's standard.
    target_compile_features(${target} PRIVATE cxx_std_${KOPT_IMPORTED_STANDARD})
  endif()
endfunction()

# Candidate `id`'s harness executable, candidate_<id>: its sources regenerated when an input
# changes, the content hash stamped in when it links, compiled as its backend needs. With an
# application (family.json "app"), also its variant candidate_<id>_application.
function(_kopt_candidate_executable name id)
  add_custom_command(
    OUTPUT ${KOPT_${name}_${id}_OUTPUTS}
    COMMAND ${KOPT_EXECUTABLE} gen-instances --spec ${spec} --out-root ${state}/gen
            --candidate ${id}
    DEPENDS ${KOPT_${name}_${id}_INPUTS} ${KOPT_EXECUTABLE}
    COMMENT "kopt: generating candidate ${id} of ${name}" VERBATIM)
  _kopt_candidate_program(${name} ${id} ${p}candidate_${id} "${KOPT_${name}_HARNESS}" ${state}/bin)
  if(KOPT_${name}_APP_SOURCES)
    # The application with this candidate's kernels: built when asked (candidate_<id>_app).
    _kopt_candidate_program(${name} ${id} ${p}candidate_${id}_application
                            "${KOPT_${name}_APP_SOURCES}" ${state}/bin/app)
    set_target_properties(${p}candidate_${id}_application PROPERTIES EXCLUDE_FROM_ALL ON)
  endif()
  set(import_compiled ${import_compiled} PARENT_SCOPE)
endfunction()

# One program of candidate `id`: `main_sources` (the harness, or the application's) with the
# candidate's generated sources, named candidate_<id> in `out_dir`.
function(_kopt_candidate_program name id target main_sources out_dir)
  set(dir "${KOPT_${name}_${id}_DIR}")
  set(sources ${KOPT_${name}_${id}_SOURCES})
  if(imported)
    # Instance TUs compile in a target of their own with the tree's flags only (see
    # _kopt_imported_scope); the tree's library already holds the baseline's in library mode.
    list(FILTER sources EXCLUDE REGEX "/instances/[^/]*$")
  endif()
  add_executable(${target} ${main_sources} ${sources})
  target_include_directories(${target} PRIVATE ${dir})
  target_link_libraries(${target} PRIVATE KernelOpt::harness)
  # The hash slot is kept even in a program that never reads it (an application): kopt reads
  # which candidate's code a binary holds from it.
  target_link_options(${target} PRIVATE "LINKER:--undefined=kopt_candidate_hash_slot")
  # Every symbol bound at load, the GOT read-only after it (full RELRO): the harness's guard
  # refuses an executable whose GOT a candidate could rewrite.
  target_link_options(${target} PRIVATE "LINKER:-z,relro,-z,now")
  if(imported)
    _kopt_link_imported(${name} ${id} ${target})
    set(import_compiled ${import_compiled} PARENT_SCOPE)
  endif()
  # The content hash is in no TU (a changed hash would cost a compile): kopt stamps it into
  # the executable when it links, and a changed hash re-links.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${dir}/kopt_hash.txt)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${KOPT_EXECUTABLE} stamp-hash $<TARGET_FILE:${target}>
            --hash-file ${dir}/kopt_hash.txt
    VERBATIM)
  set_target_properties(${target} PROPERTIES JOB_POOL_COMPILE ${pool})
  target_compile_features(${target} PRIVATE cxx_std_17)
  if(NOT imported)
    # A project without a build type compiles with no -O at all, and its candidates would be
    # measured unoptimised: they compile with -O3 then, as a Release build's do (kopt_add_family
    # says so at configure). An IMPORTED family's instance TUs keep the tree's own flags.
    target_compile_options(${target} PRIVATE $<$<CONFIG:>:-O3>)
  endif()
  set_target_properties(${target} PROPERTIES
    CXX_EXTENSIONS OFF
    RUNTIME_OUTPUT_DIRECTORY ${out_dir}
    OUTPUT_NAME candidate_${id})
  if(backend STREQUAL "cuda")
    # Instance TUs hold the kernels: nvcc compiles them; registry and dispatch stay
    # C++ and only need the CUDA headers.
    set(instances ${KOPT_${name}_${id}_SOURCES})
    list(FILTER instances INCLUDE REGEX "/instances/[^/]*$")
    set_source_files_properties(${instances} PROPERTIES LANGUAGE CUDA)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
    set_target_properties(${target} PROPERTIES CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON
                                               CUDA_EXTENSIONS OFF)
  endif()
  if(backend STREQUAL "hip")
    _kopt_hip_target(${name} ${target} "${main_sources};${KOPT_${name}_${id}_SOURCES}")
  endif()
endfunction()

# Every compile of candidate `id` goes through `kopt launch-compile` (then ccache when used);
# sets the caller's launcher_<id> for the imported instance target too.
function(_kopt_candidate_launcher name id)
  set(dir "${KOPT_${name}_${id}_DIR}")
  # Compiling from the candidate's own folder makes the relative paths ccache hashes the
  # same for every candidate folder of the same content; the launcher also rewrites the
  # compiler's messages to name the user's files instead of the generated copies.
  set(launcher "${KOPT_EXECUTABLE};launch-compile;--cwd;${dir};--base-dir;${base_dir}")
  if(KOPT_USE_CCACHE AND KOPT_CCACHE_PROGRAM)
    if(remote)
      list(APPEND launcher --remote-storage "${remote}")
    endif()
    list(APPEND launcher -- ${KOPT_CCACHE_PROGRAM})
  else()
    list(APPEND launcher --)
  endif()
  foreach(target ${p}candidate_${id} ${p}candidate_${id}_application)
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER "${launcher}"
                                                 CUDA_COMPILER_LAUNCHER "${launcher}"
                                                 HIP_COMPILER_LAUNCHER "${launcher}")
    endif()
  endforeach()
  set(launcher_${id} "${launcher}" PARENT_SCOPE)
endfunction()

# Candidate `id`'s bench target and its tests: .build, .bench, .correctness, and .keep for
# every candidate but the baseline.
function(_kopt_candidate_tests name id)
  set(target ${p}candidate_${id})
  add_custom_target(${target}_bench
    # Over the family's compile_budget_s, the bench fails naming the slowest TUs.
    COMMAND ${KOPT_EXECUTABLE} build-report ${CMAKE_BINARY_DIR} --spec ${spec}
    COMMAND ${run} bench ${state_args} --candidate ${id}
            --identity-dir ${CMAKE_BINARY_DIR} ${prefix_args}
    USES_TERMINAL VERBATIM)
  add_dependencies(${target}_bench ${target} ${p}candidate_${baseline})

  add_test(NAME ${target}.build
           COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target ${target}
                   ${p}candidate_${baseline})
  set_tests_properties(${target}.build PROPERTIES
    FIXTURES_SETUP ${p}${name}.${id}.built RESOURCE_LOCK kopt_build)
  add_test(NAME ${target}.bench
           COMMAND ${run} bench ${state_args} --candidate ${id} --decide-failed --reuse
                   --identity-dir ${CMAKE_BINARY_DIR} ${prefix_args})
  set_tests_properties(${target}.bench PROPERTIES
    FIXTURES_SETUP ${p}${name}.${id}.measured
    FIXTURES_REQUIRED "${p}${name}.${id}.built;${p}${name}.golden;${p}${name}.best.built"
    ${bench_lock} ${gpu_groups})
  add_test(NAME ${target}.correctness
           COMMAND ${run} check ${state_args} --candidate ${id}
                   --build-dir ${CMAKE_BINARY_DIR} ${prefix_args})
  set_tests_properties(${target}.correctness PROPERTIES
    LABELS correctness
    FIXTURES_REQUIRED "${p}${name}.${id}.built;${p}${name}.golden" ${gpu_groups})
  if(NOT id STREQUAL baseline)
    add_test(NAME ${target}.keep COMMAND ${KOPT_EXECUTABLE} decide ${state_args} --candidate ${id})
    set_tests_properties(${target}.keep PROPERTIES
      LABELS keep
      FIXTURES_REQUIRED "${p}${name}.${id}.measured")
  endif()
  if(KOPT_${name}_APP_SOURCES)
    # The application A/B: BEST's variant and this one, side by side (kopt app builds both).
    add_custom_target(${target}_app
      COMMAND ${run} app ${state_args} --candidate ${id} --build-dir ${CMAKE_BINARY_DIR}
              ${prefix_args}
      USES_TERMINAL VERBATIM)
    add_test(NAME ${target}.app
             COMMAND ${run} app ${state_args} --candidate ${id} --build-dir ${CMAKE_BINARY_DIR}
                     ${prefix_args})
    set_tests_properties(${target}.app PROPERTIES
      LABELS app
      FIXTURES_REQUIRED "${p}${name}.${id}.measured" ${bench_lock} ${gpu_groups})
  endif()
endfunction()

# A candidate's bench target measures it beside BEST, so BEST's executable is built with it.
# BEST is read from the ledger's state.json here, and state.json is a configure input once it
# exists: a record that changes BEST re-runs the configure step at the next build (so does a new
# candidate folder). Without a ledger BEST is the baseline, a dependency already; an unreadable
# state.json, or a BEST whose folder is gone, is left to kopt bench to report.
function(_kopt_best_dependency name)
  set(state_json "${state}/ledger/state.json")
  if(ARG_LEDGER)
    set(state_json "${ledger}/state.json")
  endif()
  if(NOT EXISTS "${state_json}")
    return()
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${state_json}")
  file(READ "${state_json}" content)
  string(JSON best ERROR_VARIABLE error GET "${content}" best)
  if(error OR NOT TARGET ${p}candidate_${best})
    return()
  endif()
  foreach(id IN LISTS KOPT_${name}_CANDIDATES)
    if(NOT id STREQUAL best)
      add_dependencies(${p}candidate_${id}_bench ${p}candidate_${best})
    endif()
  endforeach()
endfunction()

# The family's own tests: .golden (the baseline writes the golden) and .best.build (BEST, found
# at test time, is built for the benches).
function(_kopt_family_tests name)
  add_test(NAME ${p}${name}.golden
           COMMAND ${run} bench ${state_args} --golden-only)
  set_tests_properties(${p}${name}.golden PROPERTIES
    FIXTURES_SETUP ${p}${name}.golden
    FIXTURES_REQUIRED ${p}${name}.${baseline}.built ${gpu_groups})
  # One HTML page of the family's figures (loop history, decisions, tuning, heuristic, compile
  # waterfall); it reads what is there and builds nothing.
  add_custom_target(${p}${name}_report
    COMMAND ${KOPT_EXECUTABLE} report ${state_args} --build-dir ${CMAKE_BINARY_DIR}
            --out ${state}/report.html
    USES_TERMINAL VERBATIM)
  # BEST changes as candidates are recorded, so it is found (and built) at test time; each
  # candidate's .bench measures it side by side with the candidate.
  add_test(NAME ${p}${name}.best.build
           COMMAND ${KOPT_EXECUTABLE} bench ${state_args} --best --build-dir ${CMAKE_BINARY_DIR}
                   --build-only --prefix "${p}")
  set_tests_properties(${p}${name}.best.build PROPERTIES
    FIXTURES_SETUP ${p}${name}.best.built
    RESOURCE_LOCK kopt_build)
endfunction()

# kopt_add_family(<name> SPEC <family.json> [STATE_DIR <dir>] [LEDGER <dir>] [PREFIX <p>]
#                 [CCACHE_REMOTE <url>] [LAUNCHER <command>...])
#   name           must equal family.json's "name"
#   STATE_DIR      generated sources, binaries, results, golden (default <build>/kopt/<name>)
#   LEDGER         state.json, performance.md, attempts.jsonl (default <STATE_DIR>/ledger)
#   PREFIX         prepended to target and test names, for several families in one project
#   CCACHE_REMOTE  ccache remote_storage for candidate compiles (default KOPT_CCACHE_REMOTE)
#   IMPORTED       a file from `kopt import`: candidates' instance TUs compile with that tree
#                  target's flags and no others; baseline 00 links the tree's library when the
#                  target is one, else compiles its instances the same way (docs/IMPORT.md)
#   LAUNCHER       prefix of every harness run: the bench target, the .bench, .golden,
#                  and .correctness tests (default KOPT_LAUNCHER), e.g. srun --gres=gpu:1
# The steps below read and set variables of this function's scope (spec, state, p, backend,
# baseline...), each helper saying which.
function(kopt_add_family name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "SPEC;STATE_DIR;LEDGER;PREFIX;CCACHE_REMOTE;IMPORTED"
                        "LAUNCHER")
  if(NOT ARG_SPEC)
    message(FATAL_ERROR "kopt_add_family(${name}): SPEC <family.json> is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kopt_add_family(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  _kopt_find_executable()
  get_property(multi_config GLOBAL PROPERTY GENERATOR_IS_MULTI_CONFIG)
  if(NOT multi_config AND NOT CMAKE_BUILD_TYPE)
    message(NOTICE "kopt: ${name}: CMAKE_BUILD_TYPE is not set, so the family's candidates "
                   "compile with -O3, as in a Release build; set CMAKE_BUILD_TYPE to choose")
  endif()
  _kopt_family_settings(${name})
  _kopt_generate_family(${name})
  _kopt_backend_settings(${name})
  set(baseline "${KOPT_${name}_BASELINE}")
  _kopt_read_import(${name})
  _kopt_compile_pool(${backend} pool)
  set(import_compiled "") # candidates whose instance TUs compile with the imported flags

  foreach(id IN LISTS KOPT_${name}_CANDIDATES)
    _kopt_candidate_executable(${name} ${id})
    _kopt_candidate_launcher(${name} ${id})
    _kopt_candidate_tests(${name} ${id})
  endforeach()
  _kopt_best_dependency(${name})

  if(import_compiled)
    # A folder of kopt's own, so that none of this project's flags reach the instance TUs.
    file(CONFIGURE OUTPUT "${state}/imported/CMakeLists.txt"
         CONTENT "# Generated by kopt_add_family(${name}): the instance TUs, with the imported flags only.\n_kopt_imported_scope()\n")
    add_subdirectory("${state}/imported" "${state}/imported-build")
  endif()
  _kopt_family_tests(${name})
  _kopt_register_family(${name})
endfunction()
