/** Runs in every test file: removes the temp folders its tests made, whether they passed or not. */
import { afterAll } from 'vitest';
import { removeTempDirs } from './temp.ts';

afterAll(removeTempDirs);
