! likwid_fortran_test.F90: the LIKWID package's Fortran module `likwid`
! (integrations/likwid/likwid.F90) beyond what LIKWID's F-markerAPI.F90
! example calls; run by likwid_test.py with a session.
!
!   UNCORE_EVENTS=imc/CAS_COUNT.RD UNCORE_BACKEND=sim \
!     likwid_fortran_test REPORT.json
!
! Checks: a name padded with blanks is the same region as the name without
! them; GET (count, time, nr_events); RESET of a stopped region zeroes it;
! likwid_markerWriteFile writes the report; the NvMarker (LIKWID 5.2,
! WriteFile 5.4) and RocmMarker (5.3, WriteFile 5.4) subroutines compile
! and do nothing (no file, and likwid_test.py finds no region "gpu").  Prints "ok ..." or
! "FAIL ..." per check; stops with code 1 when one failed.
program likwid_fortran_test
  use likwid
  implicit none
  character(len=32) :: padded
  character(len=256) :: report
  integer :: nr_events, count, failures
  double precision :: events(8), time

  failures = 0
  if (command_argument_count() /= 1) then
    print '(a)', "usage: likwid_fortran_test REPORT.json"
    stop 2
  end if
  call get_command_argument(1, report)

  call likwid_markerInit()
  call likwid_markerThreadInit()
  call likwid_markerRegisterRegion("fortran")
  padded = "fortran"
  call likwid_markerStartRegion(padded)
  call likwid_markerStopRegion("fortran")
  call likwid_markerStartRegion("fortran")
  call likwid_markerStopRegion(padded)
  nr_events = 8
  events = -1
  call likwid_markerGetRegion("fortran", nr_events, events, time, count)
  call check(count == 2, "blank-padded and plain names: one region, count 2")
  call check(nr_events == 1, "GET: nr_events 1 (one event in the session)")
  call check(time > 0 .and. time < 1, "GET: time > 0")
  call check(events(2) < 0, "GET: nothing written past nr_events")

  call likwid_markerNextGroup()
  call likwid_markerResetRegion(padded)
  nr_events = 8
  call likwid_markerGetRegion(padded, nr_events, events, time, count)
  call check(count == 0 .and. .not. time > 0 .and. &
             .not. events(1) > 0, &
             "RESET: count, time and events 0")

  call likwid_NvMarkerInit()
  call likwid_NvMarkerRegisterRegion("gpu")
  call likwid_NvMarkerStartRegion("gpu")
  call likwid_NvMarkerStopRegion("gpu")
  call likwid_NvMarkerResetRegion("gpu")
  call likwid_NvMarkerNextGroup()
  call likwid_NvMarkerWriteFile("gpu.json")
  call likwid_NvMarkerClose()
  call likwid_RocmMarkerInit()
  call likwid_RocmMarkerRegisterRegion("gpu")
  call likwid_RocmMarkerStartRegion("gpu")
  call likwid_RocmMarkerStopRegion("gpu")
  call likwid_RocmMarkerResetRegion("gpu")
  call likwid_RocmMarkerNextGroup()
  call likwid_RocmMarkerWriteFile("gpu.json")
  call likwid_RocmMarkerClose()
  call check(.not. file_exists("gpu.json"), &
             "NvMarker/RocmMarker WriteFile write nothing")

  call likwid_markerWriteFile(trim(report))
  call check(file_exists(trim(report)), "likwid_markerWriteFile: written")
  call likwid_markerClose()
  if (failures > 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      print '(2a)', "ok   ", what
    else
      print '(2a)', "FAIL ", what
      failures = failures + 1
    end if
  end subroutine check

  logical function file_exists(path)
    character(*), intent(in) :: path
    inquire(file=path, exist=file_exists)
  end function file_exists
end program likwid_fortran_test
