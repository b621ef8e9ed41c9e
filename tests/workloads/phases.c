/* phases: three CPU-bound phases, phase_a, phase_b and phase_c, each
 * spinning for SECONDS of CPU time, that switch their own recording with
 * sample-record's --control FIFOs: between phase_a and phase_b it writes
 * ON to the control FIFO, between phase_b and phase_c OFF, and waits for
 * the recorder's answer each time (printed on stdout, "ack" or "err"). So
 * a recording started with -D -1 holds phase_b only, exactly: the recorder
 * switches the events before it answers.
 *
 * Usage: phases CTL ACK SECONDS [ON [OFF]]   (default ON "enable", OFF
 *        "disable")
 *
 * phases --mark FILE: no FIFOs, for --flight-recorder. phase_a for 1 s of
 * CPU time, phase_b for 2 s, phase_c for 0.5 s, then it creates FILE (the
 * test's cue to take a snapshot: phase_c is running and phase_a ended at
 * least 2.5 s ago), then phase_c for 2.5 s more.
 */
#include "workload.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t sink;

NOINLINE void phase_a(double seconds) {
  SPIN_UNTIL(thread_cpu_ns() + (int64_t)(seconds * 1e9), &sink, 6364136223846793005ULL, 1ULL);
}

NOINLINE void phase_b(double seconds) {
  SPIN_UNTIL(thread_cpu_ns() + (int64_t)(seconds * 1e9), &sink, 2862933555777941757ULL, 3ULL);
}

NOINLINE void phase_c(double seconds) {
  SPIN_UNTIL(thread_cpu_ns() + (int64_t)(seconds * 1e9), &sink, 3935559000370003845ULL, 5ULL);
}

/* Writes `command` and a newline to ctl, then reads one answer line from
 * ack and prints it. */
static void command(int ctl, int ack, const char *text) {
  char line[256];
  const size_t n = strlen(text);
  if (n + 1 > sizeof(line)) exit(2);
  memcpy(line, text, n);
  line[n] = '\n';
  if (write(ctl, line, n + 1) != (ssize_t)(n + 1)) {
    perror("phases: write to the control FIFO");
    exit(1);
  }
  size_t got = 0;
  while (got + 1 < sizeof(line)) {
    const ssize_t r = read(ack, line + got, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      perror("phases: read from the acknowledgement FIFO");
      exit(1);
    }
    if (line[got] == '\n') break;
    ++got;
  }
  line[got] = '\0';
  printf("%s: %s\n", text, line);
  fflush(stdout);
}

static int marked(const char *file) {
  phase_a(1.0);
  phase_b(2.0);
  phase_c(0.5);
  const int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    perror("phases: create the mark file");
    return 1;
  }
  close(fd);
  phase_c(2.5);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--mark") == 0) return marked(argv[2]);
  if (argc < 4) {
    fprintf(stderr, "usage: %s CTL ACK SECONDS [ON [OFF]]\n", argv[0]);
    return 2;
  }
  /* The recorder holds both FIFOs open read-write: neither open waits. */
  const int ctl = open(argv[1], O_WRONLY);
  const int ack = open(argv[2], O_RDONLY);
  if (ctl < 0 || ack < 0) {
    perror("phases: open the FIFOs");
    return 1;
  }
  const double seconds = atof(argv[3]);
  phase_a(seconds);
  command(ctl, ack, argc > 4 ? argv[4] : "enable");
  phase_b(seconds);
  command(ctl, ack, argc > 5 ? argv[5] : "disable");
  phase_c(seconds);
  return 0;
}
