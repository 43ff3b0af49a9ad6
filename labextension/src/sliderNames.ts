/**
 * Every ipywidgets slider in a notebook says its name and the value it shows to a screen
 * reader.
 *
 * ipywidgets 8 draws a slider with noUiSlider: the handle that takes the focus (role
 * "slider") has no accessible name, and it announces noUiSlider's own number (for a
 * selection slider, the option's index: "1100" for a score shown as 1.00), not what the
 * readout shows. ipywidgets has no API for a control's ARIA attributes
 * (jupyter-widgets/ipywidgets#2650), so this plugin reads and writes the elements
 * ipywidgets and noUiSlider make, by their classes, inside the notebooks that
 * INotebookTracker reports and nowhere else:
 *
 * - `.widget-slider`: one slider control (ipywidgets);
 * - `.widget-label`: its description, the slider's name (ipywidgets);
 * - `.widget-readout`: the value it shows (ipywidgets);
 * - `.noUi-handle`: the handle that takes the focus (noUiSlider).
 *
 * The handle gets the label as aria-label and the readout as aria-valuetext, again whenever
 * either changes. docs/development.md lists these classes; an ipywidgets release that
 * renames them fails the browser tests (tests/browser/labdriver.py, sliders_unannounced).
 */
import type {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, type NotebookPanel } from '@jupyterlab/notebook';

/** Name every slider handle under `root` after its label and readout. */
export function nameSliders(root: ParentNode): void {
  root.querySelectorAll('.widget-slider').forEach(slider => {
    const handle = slider.querySelector('.noUi-handle');
    if (!handle) {
      return;
    }
    const name = slider.querySelector('.widget-label')?.textContent?.trim() ?? '';
    const value =
      slider.querySelector('.widget-readout')?.textContent?.trim() ?? '';
    if (name && handle.getAttribute('aria-label') !== name) {
      handle.setAttribute('aria-label', name);
    }
    if (value && handle.getAttribute('aria-valuetext') !== value) {
      handle.setAttribute('aria-valuetext', value);
    }
  });
}

/** Keep the sliders of one notebook named while it is open. */
function watchNotebook(panel: NotebookPanel): void {
  const node = panel.content.node;
  let pending = false;
  const observer = new MutationObserver(() => {
    if (pending) {
      return;
    }
    pending = true;
    // after the slider's own update (noUiSlider first, then ipywidgets' readout)
    void Promise.resolve().then(() => {
      pending = false;
      nameSliders(node);
    });
  });
  observer.observe(node, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
    // noUiSlider writes its own aria-valuetext at every move
    attributeFilter: ['aria-valuetext']
  });
  nameSliders(node);
  panel.disposed.connect(() => observer.disconnect());
}

export const sliderNames: JupyterFrontEndPlugin<void> = {
  id: 'attention-course-lab:slider-names',
  description:
    "Names ipywidgets' slider handles and says the value they stand for.",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, notebooks: INotebookTracker): void => {
    notebooks.forEach(watchNotebook);
    notebooks.widgetAdded.connect((_tracker, panel) => watchNotebook(panel));
  }
};
