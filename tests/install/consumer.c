/* Uses the installed C ABI, found through pkg-config. */
#include <stdio.h>
#include <tiercc/tiercc.h>

int main(int argc, char** argv) {
  tiercc_comm_t comm;
  const char* store = argc > 1 ? argv[1] : "127.0.0.1:29998";
  if (tiercc_comm_init_rank(&comm, store, 1, 0) != tiercc_success) {
    fprintf(stderr, "init: %s\n", tiercc_get_last_error());
    return 1;
  }
  int size = 0;
  tiercc_comm_size(comm, &size);
  printf("consumer_pkgconfig: size %d\n", size);
  return tiercc_comm_destroy(comm) == tiercc_success && size == 1 ? 0 : 1;
}
