// The public pages, one file per page; app.tsx routes /, /e/:slug and its public pages here.
export { EventsPage } from './events';
export { EventPage } from './event';
export { GalleryPage } from './gallery';
export { ProjectPage } from './project';
export { ResultsPage } from './results';
export { VerifyPage } from './verify';
