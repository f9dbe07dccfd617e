! marker_f.F90: LIKWID 5.4's marker API from Fortran through the module
! `likwid`, the way LIKWID's F-markerAPI.F90 uses it, with 5.4's
! likwid_markerWriteFile.  Built by cmake_consumer/CMakeLists.txt against
! whatever find_package(likwid COMPONENTS marker) found.
!
!   marker_f WRITTEN_FILE
!
! Prints "threads N" and the calling thread's "count C nevents E" from
! likwid_markerGetRegion; stops with code 1 unless it saw the 3 rounds and
! one event (UNCORE_EVENTS=imc/CAS_COUNT.RD).
#ifndef LIKWID_PERFMON
#error "LIKWID_PERFMON is not defined (find_package(likwid COMPONENTS marker))"
#endif
program marker_f
  use likwid
!$ use omp_lib
  implicit none
  integer, parameter :: rounds = 3, n = 1000000
  integer :: nr_events, count, round, i, threads
  double precision :: events(10), time, total
  character(len=256) :: written

  if (command_argument_count() /= 1) then
    print '(a)', "usage: marker_f WRITTEN_FILE"
    stop 2
  end if
  call get_command_argument(1, written)
  threads = 1
  total = 0
  call likwid_markerInit()
!$omp parallel
  call likwid_markerThreadInit()
  call likwid_markerRegisterRegion("consumer")
!$omp master
!$ threads = omp_get_num_threads()
!$omp end master
!$omp end parallel
  do round = 1, rounds
!$omp parallel private(i) reduction(+:total)
    call likwid_markerStartRegion("consumer")
    do i = 1, n
      total = total + sqrt(dble(i))
    end do
    call likwid_markerStopRegion("consumer")
!$omp end parallel
    call likwid_markerNextGroup()
  end do
  nr_events = 10
  call likwid_markerGetRegion("consumer", nr_events, events, time, count)
  print '(a,i0)', "threads ", threads
  print '(a,i0,a,i0,a,es10.3)', "count ", count, " nevents ", nr_events, &
      " total ", total
  call likwid_markerWriteFile(trim(written))
  call likwid_markerClose()
  if (count /= rounds .or. nr_events /= 1 .or. time <= 0) stop 1
end program marker_f
