# install(SCRIPT): the units of NBDK_UNIT_SOURCES with /usr/local replaced
# by the install's prefix, into its unit directory (/lib/systemd/system
# for /usr, as Debian's packages; <prefix>/lib/systemd/system otherwise).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(unit_dir /lib/systemd/system)
else()
  set(unit_dir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
foreach(source IN LISTS NBDK_UNIT_SOURCES)
  file(READ ${source} text)
  string(REPLACE "/usr/local/" "${CMAKE_INSTALL_PREFIX}/" text "${text}")
  get_filename_component(name ${source} NAME)
  set(target $ENV{DESTDIR}${unit_dir}/${name})
  message(STATUS "Installing: ${target}")
  file(WRITE ${target} "${text}")
  file(CHMOD ${target} PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
endforeach()
