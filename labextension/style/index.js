import './base.css';
import './studio.css';
