! likwid.F90 of the Uncore SDK's LIKWID package: LIKWID's Fortran 90
! module `likwid`, its marker subroutines over libuncore_likwid.
!
!   use likwid
!   call likwid_markerInit()
!   call likwid_markerStartRegion("solve")
!   call solve()
!   call likwid_markerStopRegion("solve")
!   call likwid_markerGetRegion("solve", nr_events, events, time, count)
!   call likwid_markerClose()
!
!   gfortran prog.F90 $(pkg-config --cflags --libs uncore-sdk-likwid)
!   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_OUTPUT=report.json ./a.out
!
! Guarantees: the subroutines, dummy argument names and types of LIKWID's
! module (likwid.f90 of LIKWID 5.2; likwid.F90 of 5.3, which adds the
! likwid_RocmMarker* subroutines, and of 5.4, which adds
! likwid_markerWriteFile, likwid_NvMarkerWriteFile and
! likwid_RocmMarkerWriteFile), behaving as the C functions of likwid.h
! do.  A region name is
! the Fortran string without its trailing blanks.  Every call goes to a
! bind(C) function of libuncore_likwid (uncore_likwid_f_*, likwid_marker*),
! so this source compiles with any Fortran 2003 compiler: the package
! installs gfortran's likwid.mod (and libuncore_likwid holds this module's
! code for it); with another compiler, compile this file and link its
! object before -luncore_likwid.  The NvMarker (Nvidia) and RocmMarker
! (AMD) subroutines do nothing: GPUs are not measured.  (LIKWID's module
! has them only when LIKWID was built for that GPU; this one always.)
module likwid
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_int
  implicit none
  private

  public :: likwid_markerInit, likwid_markerThreadInit
  public :: likwid_markerNextGroup, likwid_markerClose
  public :: likwid_markerWriteFile, likwid_markerRegisterRegion
  public :: likwid_markerStartRegion, likwid_markerStopRegion
  public :: likwid_markerGetRegion, likwid_markerResetRegion
  public :: likwid_NvMarkerInit, likwid_NvMarkerNextGroup
  public :: likwid_NvMarkerClose, likwid_NvMarkerRegisterRegion
  public :: likwid_NvMarkerStartRegion, likwid_NvMarkerStopRegion
  public :: likwid_NvMarkerResetRegion, likwid_NvMarkerWriteFile
  public :: likwid_RocmMarkerInit, likwid_RocmMarkerNextGroup
  public :: likwid_RocmMarkerClose, likwid_RocmMarkerRegisterRegion
  public :: likwid_RocmMarkerStartRegion, likwid_RocmMarkerStopRegion
  public :: likwid_RocmMarkerResetRegion, likwid_RocmMarkerWriteFile

  interface
    subroutine c_init() bind(C, name="likwid_markerInit")
    end subroutine c_init

    subroutine c_thread_init() bind(C, name="likwid_markerThreadInit")
    end subroutine c_thread_init

    subroutine c_next_group() bind(C, name="likwid_markerNextGroup")
    end subroutine c_next_group

    subroutine c_close() bind(C, name="likwid_markerClose")
    end subroutine c_close

    subroutine c_write_file(file, length) &
        bind(C, name="uncore_likwid_f_write_file")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: file
      integer(c_int), value :: length
    end subroutine c_write_file

    subroutine c_register_region(tag, length) &
        bind(C, name="uncore_likwid_f_register_region")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: tag
      integer(c_int), value :: length
    end subroutine c_register_region

    subroutine c_start_region(tag, length) &
        bind(C, name="uncore_likwid_f_start_region")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: tag
      integer(c_int), value :: length
    end subroutine c_start_region

    subroutine c_stop_region(tag, length) &
        bind(C, name="uncore_likwid_f_stop_region")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: tag
      integer(c_int), value :: length
    end subroutine c_stop_region

    subroutine c_reset_region(tag, length) &
        bind(C, name="uncore_likwid_f_reset_region")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: tag
      integer(c_int), value :: length
    end subroutine c_reset_region

    subroutine c_get_region(tag, length, nr_events, events, time, count) &
        bind(C, name="uncore_likwid_f_get_region")
      import :: c_char, c_double, c_int
      character(kind=c_char), dimension(*), intent(in) :: tag
      integer(c_int), value :: length
      integer(c_int) :: nr_events
      real(c_double), dimension(*) :: events
      real(c_double) :: time
      integer(c_int) :: count
    end subroutine c_get_region

    subroutine c_gpu_marker(tag, length) &
        bind(C, name="uncore_likwid_f_gpu_marker")
      import :: c_char, c_int
      character(kind=c_char), dimension(*), intent(in) :: tag
      integer(c_int), value :: length
    end subroutine c_gpu_marker
  end interface

contains

  ! Starts measuring (the session UNCORE_EVENTS describes).  Once, in a
  ! serial region.
  subroutine likwid_markerInit()
    call c_init()
  end subroutine likwid_markerInit

  ! Nothing to do (threads need no registration).
  subroutine likwid_markerThreadInit()
    call c_thread_init()
  end subroutine likwid_markerThreadInit

  ! Nothing to do (one event set).
  subroutine likwid_markerNextGroup()
    call c_next_group()
  end subroutine likwid_markerNextGroup

  ! Stops measuring and writes the report (UNCORE_OUTPUT).
  subroutine likwid_markerClose()
    call c_close()
  end subroutine likwid_markerClose

  ! Writes the report so far to markerfile (.json, .csv or a table).
  subroutine likwid_markerWriteFile(markerfile)
    character(*), intent(in) :: markerfile
    call c_write_file(markerfile, len(markerfile, kind=c_int))
  end subroutine likwid_markerWriteFile

  subroutine likwid_markerRegisterRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_register_region(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_markerRegisterRegion

  subroutine likwid_markerStartRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_start_region(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_markerStartRegion

  subroutine likwid_markerStopRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_stop_region(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_markerStopRegion

  ! The calling thread's results of regionTag: up to nr_events event
  ! totals (nr_events set to the number written), its time in seconds and
  ! its number of calls.  No intent, as in LIKWID's interface.
  subroutine likwid_markerGetRegion(regionTag, nr_events, events, time, &
                                    count)
    character(*), intent(in) :: regionTag
    integer :: nr_events
    double precision, dimension(*) :: events
    double precision :: time
    integer :: count
    call c_get_region(regionTag, len(regionTag, kind=c_int), nr_events, &
                      events, time, count)
  end subroutine likwid_markerGetRegion

  subroutine likwid_markerResetRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_reset_region(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_markerResetRegion

  ! LIKWID's NvMarker subroutines (5.2; WriteFile 5.4): nothing (GPUs are
  ! not measured).
  subroutine likwid_NvMarkerInit()
  end subroutine likwid_NvMarkerInit

  subroutine likwid_NvMarkerNextGroup()
  end subroutine likwid_NvMarkerNextGroup

  subroutine likwid_NvMarkerClose()
  end subroutine likwid_NvMarkerClose

  subroutine likwid_NvMarkerRegisterRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_NvMarkerRegisterRegion

  subroutine likwid_NvMarkerStartRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_NvMarkerStartRegion

  subroutine likwid_NvMarkerStopRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_NvMarkerStopRegion

  subroutine likwid_NvMarkerResetRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_NvMarkerResetRegion

  subroutine likwid_NvMarkerWriteFile(filename)
    character(*), intent(in) :: filename
    call c_gpu_marker(filename, len(filename, kind=c_int))
  end subroutine likwid_NvMarkerWriteFile

  ! LIKWID's RocmMarker subroutines (5.3; WriteFile 5.4): nothing (GPUs
  ! are not measured).
  subroutine likwid_RocmMarkerInit()
  end subroutine likwid_RocmMarkerInit

  subroutine likwid_RocmMarkerNextGroup()
  end subroutine likwid_RocmMarkerNextGroup

  subroutine likwid_RocmMarkerClose()
  end subroutine likwid_RocmMarkerClose

  subroutine likwid_RocmMarkerRegisterRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_RocmMarkerRegisterRegion

  subroutine likwid_RocmMarkerStartRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_RocmMarkerStartRegion

  subroutine likwid_RocmMarkerStopRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_RocmMarkerStopRegion

  subroutine likwid_RocmMarkerResetRegion(regionTag)
    character(*), intent(in) :: regionTag
    call c_gpu_marker(regionTag, len(regionTag, kind=c_int))
  end subroutine likwid_RocmMarkerResetRegion

  subroutine likwid_RocmMarkerWriteFile(filename)
    character(*), intent(in) :: filename
    call c_gpu_marker(filename, len(filename, kind=c_int))
  end subroutine likwid_RocmMarkerWriteFile
end module likwid
