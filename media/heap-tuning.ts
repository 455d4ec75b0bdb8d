import { setFlagsFromString } from 'node:v8';

/**
 * The media process's heap, tuned for steady audio rather than small memory. Its live heap is
 * small (about 50 MB with 50 calls), but V8 sets the next full collection only about half as
 * far above it, closer than the young generation's size, so it kept starting marking work:
 * with 50 live calls, a full collection every half second at times, each holding up every
 * call's audio for 10 to 45 ms (the pipeline benchmark's p95 went from 14 to 50 ms). Letting
 * the heap grow to four times its live size between collections costs some 150 MB and
 * leaves a handful of full collections per run. The flag is read whenever V8 sets a new
 * limit, so setting it first thing takes effect for every limit after start-up.
 */
export function tuneHeapForLiveAudio(): void {
  setFlagsFromString('--heap-growing-percent=300');
}
