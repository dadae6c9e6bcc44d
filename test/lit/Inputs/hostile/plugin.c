/* A "plugin" a hostile repository names in its compile commands: loading it
   runs its constructor, which leaves a marker the tests look for. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void leaveMarker(void) {
  const char *Marker = getenv("HOSTILE_MARKER");
  FILE *Out = fopen(Marker ? Marker : "/tmp/hostile-plugin-ran", "w");
  if (Out) {
    fputs("the repository's code ran\n", Out);
    fclose(Out);
  }
}
