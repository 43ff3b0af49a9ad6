/**
 * The course's JupyterLab extension: two plugins, loaded by `./course lab`, by the students'
 * servers on the hub and by the offline site (docs/development.md, "The course's JupyterLab
 * extension").
 */
import type { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { noKernelWithoutCode } from './noKernel';
import { sliderNames } from './sliderNames';

const plugins: JupyterFrontEndPlugin<void>[] = [sliderNames, noKernelWithoutCode];

export default plugins;
