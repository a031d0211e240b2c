# KernelOptConfig.cmake twice: one in the build tree (so a project can use an uninstalled kopt
# with -DKernelOpt_DIR=<kopt build>) and one installed under lib/cmake/KernelOpt.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(KOPT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/KernelOpt)

export(TARGETS kopt kopt_harness NAMESPACE KernelOpt::
       FILE ${PROJECT_BINARY_DIR}/KernelOptTargets.cmake)
set(KOPT_CONFIG_MODULE_DIR ${PROJECT_SOURCE_DIR}/cmake)
configure_file(cmake/KernelOptConfig.cmake.in ${PROJECT_BINARY_DIR}/KernelOptConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/KernelOptConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)

install(TARGETS kopt kopt_harness EXPORT KernelOptTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY harness/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT KernelOptTargets NAMESPACE KernelOpt:: DESTINATION ${KOPT_INSTALL_CMAKEDIR})
set(KOPT_CONFIG_MODULE_DIR "\${CMAKE_CURRENT_LIST_DIR}")
configure_file(cmake/KernelOptConfig.cmake.in ${PROJECT_BINARY_DIR}/install/KernelOptConfig.cmake
               @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/install/KernelOptConfig.cmake
              ${PROJECT_BINARY_DIR}/KernelOptConfigVersion.cmake cmake/KernelOpt.cmake
        DESTINATION ${KOPT_INSTALL_CMAKEDIR})
