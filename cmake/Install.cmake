# Installs the library with an exported CMake package (find_package(tiercc)) and a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS tiercc tiercc_static EXPORT tierccTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/tiercc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tierccTargets NAMESPACE tiercc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tiercc)
configure_package_config_file(cmake/tierccConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tierccConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tiercc)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tierccConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tierccConfig.cmake ${PROJECT_BINARY_DIR}/tierccConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tiercc)
# Relocatable: the .pc file finds the prefix relative to itself.
file(RELATIVE_PATH TIERCC_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
configure_file(cmake/tiercc.pc.in ${PROJECT_BINARY_DIR}/tiercc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tiercc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
