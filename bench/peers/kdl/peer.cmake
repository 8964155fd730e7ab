# Optional peer benchmark: marionette's IK against Orocos KDL (bench/peers/kdl). Included
# from the end of the top-level CMakeLists.txt; it adds the kdl_peer target only when a
# C++ compiler, liborocos-kdl and Eigen are installed (scripts/deps-bench.sh installs
# them), and is silent otherwise: the library, the CLI and the tests never need them.
include(CheckLanguage)
check_language(CXX)
set(MN_KDL_PEER OFF)
if(CMAKE_CXX_COMPILER)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(MN_OROCOS_KDL QUIET IMPORTED_TARGET orocos-kdl)
    pkg_check_modules(MN_EIGEN3 QUIET IMPORTED_TARGET eigen3)
  endif()
  if(MN_OROCOS_KDL_FOUND AND MN_EIGEN3_FOUND)
    set(MN_KDL_PEER ON)
  endif()
endif()
if(MN_KDL_PEER)
  message(STATUS "KDL peer benchmark: enabled (orocos-kdl ${MN_OROCOS_KDL_VERSION}, eigen ${MN_EIGEN3_VERSION})")
  add_subdirectory(${CMAKE_SOURCE_DIR}/bench/peers/kdl ${CMAKE_BINARY_DIR}/bench/peers/kdl)
else()
  message(STATUS "KDL peer benchmark: disabled (needs g++, liborocos-kdl-dev, libeigen3-dev: scripts/deps-bench.sh)")
endif()
